import { childEnvironment, isServiceCredential, type ChildEnvironmentPolicy } from '../../src/domain/childEnvironment.js';

const NO_POLICY: ChildEnvironmentPolicy = { passthrough: [], modelKeyVariables: [] };

/** Every credential the service may hold in its environment, one of each kind. */
const CREDENTIALS = {
  OPENAI_API_KEY: 'sk-openai',
  ROTATION_API_KEYS: 'k1,k2',
  TELEGRAM_BOT_TOKEN: '123:telegram',
  SLACK_BOT_TOKEN: 'xoxb-slack',
  SLACK_SIGNING_SECRET: 'slack-signing',
  DISCORD_BOT_TOKEN: 'discord',
  SMS_AUTH_TOKEN: 'twilio',
  MATRIX_ACCESS_TOKEN: 'matrix',
  FEISHU_APP_SECRET: 'feishu',
  QQBOT_CLIENT_SECRET: 'qq',
  WECOM_SECRET: 'wecom',
  EMAIL_PASSWORD: 'smtp',
  BLUEBUBBLES_PASSWORD: 'bb',
  DINGTALK_WEBHOOK_URL: 'https://oapi.dingtalk.com/robot/send?access_token=abc',
  WEBHOOK_SECRET: 'hmac',
  GH_TOKEN: 'ghp_1',
  GITHUB_TOKEN: 'ghp_2',
  AGENT_CRON_SCHEDULER_TOKEN: 'bearer',
  AGENT_DATABASE_URL: 'postgres://u:p@db/agent',
  AGENT_DASHBOARD_TOKEN: 'dash',
  SOME_VENDOR_SECRET: 'x',
  DEPLOY_PASSWORD: 'y',
  ANY_OTHER_TOKEN: 'z',
  PGPASSWORD: 'pg-secret',
  PGPASSFILE: '/home/ada/.pgpass',
  PGSERVICEFILE: '/home/ada/.pg_service.conf',
  DATABASE_URL: 'postgres://u:p@db/app',
  SLACK_BOT_TOKEN_FILE: '/run/secrets/slack',
  OPENAI_API_KEY_FILE: '/run/secrets/openai',
};
const HARMLESS = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/ada',
  LANG: 'C.UTF-8',
  TELEGRAM_HOME_CHANNEL: '-100123',
  SMS_FROM: '+15550001111',
  API_KEY_FILE: '/etc/key',
  PGHOST: 'db',
  PGUSER: 'ada',
};

describe('the environment of what a job or a model can start', () => {
  it('holds none of the service credentials and everything else', () => {
    expect(childEnvironment({ ...CREDENTIALS, ...HARMLESS }, 'untrusted', NO_POLICY)).toEqual(HARMLESS);
  });

  it('judges names whatever their case', () => {
    expect(childEnvironment({ telegram_bot_token: 'x', Openai_Api_Key: 'y', PATH: '/bin' }, 'untrusted', NO_POLICY)).toEqual({
      PATH: '/bin',
    });
  });

  it('removes a variable the configuration names as a model key, whatever its name', () => {
    const policy = { ...NO_POLICY, modelKeyVariables: ['MY_LLM_CREDENTIAL'] };

    expect(childEnvironment({ MY_LLM_CREDENTIAL: 'k', PATH: '/bin' }, 'untrusted', policy)).toEqual({ PATH: '/bin' });
  });

  it('keeps what the operator passes through by name, and only that', () => {
    const policy = { ...NO_POLICY, passthrough: ['GH_TOKEN'] };

    expect(childEnvironment({ GH_TOKEN: 'ghp', GITHUB_TOKEN: 'ghp2', PATH: '/bin' }, 'untrusted', policy)).toEqual({
      GH_TOKEN: 'ghp',
      PATH: '/bin',
    });
  });
});

describe('the environment of a command model', () => {
  it('keeps the model keys and none of the other credentials', () => {
    const policy = { ...NO_POLICY, modelKeyVariables: ['MY_LLM_CREDENTIAL'] };

    expect(childEnvironment({ ...CREDENTIALS, MY_LLM_CREDENTIAL: 'k', ...HARMLESS }, 'model-program', policy)).toEqual({
      OPENAI_API_KEY: 'sk-openai',
      ROTATION_API_KEYS: 'k1,k2',
      MY_LLM_CREDENTIAL: 'k',
      ...HARMLESS,
    });
  });
});

describe('the environment of the code-host CLI', () => {
  it('keeps its login and none of the other credentials', () => {
    expect(childEnvironment({ ...CREDENTIALS, ...HARMLESS }, 'code-host-cli', NO_POLICY)).toEqual({
      GH_TOKEN: 'ghp_1',
      GITHUB_TOKEN: 'ghp_2',
      ...HARMLESS,
    });
  });
});

describe('isServiceCredential', () => {
  it.each(Object.keys(CREDENTIALS))('calls %s a credential', (name) => {
    expect(isServiceCredential(name, NO_POLICY)).toBe(true);
  });

  it.each(Object.keys(HARMLESS))('does not call %s one', (name) => {
    expect(isServiceCredential(name, NO_POLICY)).toBe(false);
  });
});
