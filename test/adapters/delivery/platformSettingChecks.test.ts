import { ConfiguredPlatforms } from '../../../src/adapters/delivery/ConfiguredPlatforms.js';
import { isHttpUrl } from '../../../src/adapters/delivery/platformSettingChecks.js';

/** What the gateway's start-up check and every send refuse in a platform's settings, contacting nobody. */
describe('platform settings that cannot be used', () => {
  const problemsOf = (sections: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) =>
    new ConfiguredPlatforms(sections, env).settingProblems();

  it('finds nothing in the defaults, nor in good addresses', () => {
    expect(problemsOf({})).toEqual([]);
    expect(
      problemsOf({
        telegram: { bot_token: 't', base_url: 'http://127.0.0.1:8080/tg' },
        matrix: { homeserver: 'https://matrix.example.org', access_token: 'x' },
      }),
    ).toEqual([]);
  });

  it('names an address from the environment, which wins, and one from config.yaml', () => {
    expect(problemsOf({ mattermost: { url: 'chat.example.com' } }, { TELEGRAM_BASE_URL: 'htp:/api.telegram.org' })).toEqual([
      {
        platform: 'telegram',
        key: 'base_url',
        source: 'environment',
        message:
          'TELEGRAM_BASE_URL (which wins over platforms.telegram.base_url) must be an http:// or https:// URL (got "htp:/api.telegram.org"); correct it.',
      },
      {
        platform: 'mattermost',
        key: 'url',
        source: 'config',
        message: 'platforms.mattermost.url must be an http:// or https:// URL (got "chat.example.com"); correct it.',
      },
    ]);
  });

  it('never shows the value of a secret address', () => {
    const [problem] = problemsOf({ dingtalk: { webhook_url: 'oapi.dingtalk.com/robot/send?access_token=hunter2' } });

    expect(problem!.message).toBe(
      'platforms.dingtalk.webhook_url must be an http:// or https:// URL (got a value not shown here); correct it.',
    );
  });

  it('refuses numbers that are none, an unknown secure mode and a section that is not a mapping', () => {
    expect(
      problemsOf({ email: { smtp_port: 'smtp', secure: 'ssl' }, slack: 'xoxb', sms: { timeout_seconds: '-1' } }).map(
        (problem) => problem.message,
      ),
    ).toEqual([
      'platforms.slack must be a mapping of settings such as "bot_token:" (got a string).',
      'platforms.email.smtp_port must be a port number from 1 to 65535 (got "smtp"); correct it.',
      'platforms.email.secure must be starttls, tls or none (got "ssl"); correct it.',
      'platforms.sms.timeout_seconds must be a positive number of seconds (got "-1"); correct it.',
    ]);
  });

  it('refuses such a setting before anything is sent to the platform', () => {
    const platforms = new ConfiguredPlatforms({ telegram: { bot_token: 't', base_url: 'ftp://files.example.com' } }, {});

    expect(platforms.addressProblem('telegram', { chatId: '-100123', threadId: null })).toBe(
      'platforms.telegram.base_url must be an http:// or https:// URL (got "ftp://files.example.com"); correct it',
    );
  });

  it.each([
    ['https://api.telegram.org', true],
    ['http://127.0.0.1:9', true],
    ['htp:/x', false],
    ['api.telegram.org', false],
    ['https://', false],
  ])('%s is an http(s) URL: %s', (text, expected) => {
    expect(isHttpUrl(text)).toBe(expected);
  });
});
