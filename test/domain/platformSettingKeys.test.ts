import { INBOUND_PLATFORMS, RECEIVER_NEEDS } from '../../src/adapters/config/chatSettings.js';
import { PLATFORM_SPECS } from '../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../src/adapters/delivery/PlatformSettings.js';
import { isServiceCredential, NO_CHILD_ENVIRONMENT_POLICY } from '../../src/domain/childEnvironment.js';
import { KNOWN_PLATFORMS } from '../../src/domain/DeliveryTarget.js';
import { environmentVariableFor, isSecretSetting } from '../../src/domain/platformSettingKeys.js';
import { ownEntry } from '../../src/domain/ownEntry.js';

/** Every setting the catalogue names for a platform: what it requires, each set of alternatives, its defaults, and what its receiver needs. */
function settingsOf(platform: string): string[] {
  const spec = PLATFORM_SPECS[platform]!;
  const receiver = ownEntry<{ credentials: readonly string[] }>(RECEIVER_NEEDS, platform);
  return [
    ...new Set([...spec.required, ...(spec.alternatives ?? []).flat(), ...Object.keys(spec.defaults), ...(receiver?.credentials ?? [])]),
  ];
}

const SETTINGS = Object.keys(PLATFORM_SPECS).flatMap((platform) => settingsOf(platform).map((key) => [platform, key] as const));

describe('the secret settings of the platform catalogue', () => {
  it('names the same platforms in the domain and in the catalogue of senders, in their own orders', () => {
    expect([...KNOWN_PLATFORMS].sort()).toEqual(Object.keys(PLATFORM_SPECS).sort());
    for (const platform of INBOUND_PLATFORMS) expect(KNOWN_PLATFORMS).toContain(platform);
  });

  it('takes as secret exactly the credentials among the settings the catalogue names', () => {
    expect(SETTINGS.filter(([, key]) => isSecretSetting(key)).map(([platform, key]) => `${platform}.${key}`)).toEqual([
      'telegram.bot_token',
      'discord.bot_token',
      'slack.bot_token',
      'slack.signing_secret',
      'mattermost.token',
      'matrix.access_token',
      'email.password',
      'sms.auth_token',
      'whatsapp.access_token',
      'homeassistant.token',
      'feishu.app_secret',
      'dingtalk.client_secret',
      'dingtalk.webhook_url',
      'wecom.secret',
      'qqbot.client_secret',
      // The URL that hands out QQ's access tokens: not a credential, but it holds "token", and is kept back all the same.
      'qqbot.token_url',
      'weixin.token',
      'bluebubbles.password',
    ]);
  });

  it.each(SETTINGS)('keeps %s.%s from children exactly when its value is cut out of messages', (platform, key) => {
    const variable = environmentVariableFor(platform, key);
    const value = `value-of-${platform}-${key}`;

    const secrets = platformSettings(platform, {}, { [variable]: value }, {}).secrets;

    expect(isServiceCredential(variable, NO_CHILD_ENVIRONMENT_POLICY)).toBe(isSecretSetting(key));
    expect(secrets.includes(value)).toBe(isSecretSetting(key));
  });

  it('reads the words whatever their case', () => {
    expect(['BOT_TOKEN', 'App_Secret', 'password', 'WEBHOOK_URL'].every(isSecretSetting)).toBe(true);
    expect(['url', 'from', 'account_sid', 'webhook'].some(isSecretSetting)).toBe(false);
  });
});
