import { describe, expect, it } from '@jest/globals';
import { credentialsShownFinding } from '../../src/composition/startupChecks.js';

describe('the start-up finding about credentials the environment still shows', () => {
  it('is a notice naming them, why, and the file to give instead', () => {
    expect(
      credentialsShownFinding({ names: ['OPENAI_API_KEY', 'TELEGRAM_BOT_TOKEN'], reason: '/proc/self/mem cannot be written (EACCES)' }),
    ).toEqual({
      effect: 'notice',
      key: '',
      message:
        'Started with this environment, the gateway cannot hide OPENAI_API_KEY, TELEGRAM_BOT_TOKEN from other processes of its user (/proc/self/mem cannot be written (EACCES)); ' +
        'give each as a file instead, such as OPENAI_API_KEY_FILE=/run/secrets/openai_api_key (see "Secrets in files" in docs/configuration.md).',
    });
  });

  it('is not there when nothing is shown', () => {
    expect(credentialsShownFinding({ names: [], reason: null })).toBeNull();
  });
});
