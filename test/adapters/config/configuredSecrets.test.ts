import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { configuredSecrets } from '../../../src/adapters/config/configuredSecrets.js';

describe('the credentials a transcript is scrubbed of', () => {
  it('names each credential of the environment by its variable, and leaves out the rest and the paths of <NAME>_FILE', () => {
    const secrets = configuredSecrets(
      {
        OPENAI_API_KEY: 'sk-openai-1',
        TELEGRAM_BOT_TOKEN: 'tg-token-1',
        MY_KEY_VAR: 'named-by-config',
        TELEGRAM_BOT_TOKEN_FILE: '/run/secrets/telegram',
        HOME: '/home/agent',
        EMPTY_TOKEN: '',
      },
      { providers: { local: { api_key_env: 'MY_KEY_VAR' } } } as unknown as AgentConfig,
    );

    expect(secrets).toEqual(
      expect.arrayContaining([
        { name: 'OPENAI_API_KEY', value: 'sk-openai-1' },
        { name: 'TELEGRAM_BOT_TOKEN', value: 'tg-token-1' },
        { name: 'MY_KEY_VAR', value: 'named-by-config' },
      ]),
    );
    expect(secrets.map((secret) => secret.name)).not.toEqual(expect.arrayContaining(['HOME']));
    expect(secrets.map((secret) => secret.value)).not.toContain('/run/secrets/telegram');
    expect(secrets.map((secret) => secret.name)).not.toContain('EMPTY_TOKEN');
  });

  it('names each credential of config.yaml by its path: keys, secrets, tokens, passwords, header values', () => {
    const config = {
      providers: { openai: { api_keys: ['sk-a-123456', 'sk-b-123456'], base_url: 'https://api.example.org' } },
      platforms: { telegram: { token: 'tg-config-token' }, webhook: { extra: { secret: 'hook-secret', port: 8644 } } },
      mcp_servers: { tracker: { url: 'https://mcp.example.org', headers: { Authorization: 'Bearer mcp-123456' } } },
    } as unknown as AgentConfig;

    expect(configuredSecrets({}, config)).toEqual([
      { name: 'providers.openai.api_keys', value: 'sk-a-123456' },
      { name: 'providers.openai.api_keys', value: 'sk-b-123456' },
      { name: 'platforms.telegram.token', value: 'tg-config-token' },
      { name: 'platforms.webhook.extra.secret', value: 'hook-secret' },
      { name: 'mcp_servers.tracker.headers.Authorization', value: 'Bearer mcp-123456' },
    ]);
  });
});
