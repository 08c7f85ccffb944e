import type { PostgresDatabase } from '../../src/adapters/postgres/PostgresDatabase.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakeLlmServer, replies, type RecordedRequest } from '../support/fakeLlmServer.js';
import { answer, LocalWebServer } from '../support/localWebServer.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { commandModelLines, localModelLines, webhookListenerLines } from './configLines.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';

/**
 * The agent's tools and both SDKs as users run them: through the built dist/agent.js, whose
 * lazily loaded modules (undici, html-to-text, the SDKs) are bundled differently from the
 * sources the unit tests run. A model on a local server asks for the tools; the tool results it
 * is sent back are what the tests read.
 */

/** Every kind of credential the service may hold in its environment. */
const CREDENTIALS: Record<string, string> = {
  TELEGRAM_BOT_TOKEN: 'canary-telegram-123',
  SLACK_BOT_TOKEN: 'canary-slack-xoxb',
  DISCORD_BOT_TOKEN: 'canary-discord',
  SMS_AUTH_TOKEN: 'canary-twilio',
  FEISHU_APP_SECRET: 'canary-feishu',
  EMAIL_PASSWORD: 'canary-smtp',
  DINGTALK_WEBHOOK_URL: 'https://oapi.dingtalk.com/robot/send?access_token=canary-dingtalk',
  GH_TOKEN: 'canary-gh',
  GITHUB_TOKEN: 'canary-github',
  OPENAI_API_KEY: 'canary-openai',
  AGENT_CRON_SCHEDULER_TOKEN: 'canary-scheduler',
  AGENT_DATABASE_URL: 'postgres://agent:canary-db@127.0.0.1/agent',
  AGENT_DASHBOARD_TOKEN: 'canary-dashboard',
  VENDOR_SECRET: 'canary-vendor',
  DEPLOY_PASSWORD: 'canary-deploy',
  PGPASSWORD: 'canary-pgpassword',
  PGPASSFILE: '/nowhere/canary-pgpass',
};
const LLM_KEY = { TEST_LLM_KEY: 'canary-llm-key' };
// The database URL's password is a canary of its own: the URL is set to a scratch database
// (below), so that the commands of these tests work on it while their children must not see it.
const CANARIES = [...Object.values(CREDENTIALS), LLM_KEY.TEST_LLM_KEY, 'canary-db'];

function llmConfig(llm: FakeLlmServer, type: 'openai' | 'anthropic', extra: string[] = []): string {
  return ['timezone: UTC', ...localModelLines(llm, type), ...extra, ''].join('\n');
}

/** The content of the tool results sent back to the model in its `index`th request (OpenAI format). */
function toolResults(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((message: { role: string }) => message.role === 'tool')
    .map((message: { content: string }) => message.content);
}

function anthropicToolResults(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .flatMap((message: { content: unknown }) => (Array.isArray(message.content) ? message.content : []))
    .filter((block: { type: string }) => block.type === 'tool_result')
    .map((block: { content: unknown }) => (typeof block.content === 'string' ? block.content : JSON.stringify(block.content)));
}

describe('the tools through the built executable', () => {
  let home: string;
  let llm: FakeLlmServer;
  let web: LocalWebServer;

  let database: ScratchDatabase;
  let jobsTable: PostgresDatabase;

  beforeAll(async () => {
    requireBuiltAgent();
    database = await scratchDatabase();
    jobsTable = await database.open();
    const url = new URL(database.url);
    url.password = 'canary-db';
    CREDENTIALS.AGENT_DATABASE_URL = url.toString();
  });

  afterAll(async () => {
    await jobsTable?.close();
    await database?.drop();
  });

  beforeEach(async () => {
    await jobsTable.query('TRUNCATE agent_jobs');
    llm = await FakeLlmServer.start();
    web = await LocalWebServer.start({
      '/page': answer(
        200,
        'text/html; charset=utf-8',
        '<html><head><title>Status page</title></head><body><p>All systems nominal.</p></body></html>',
      ),
      '/search': answer(
        200,
        'application/json',
        JSON.stringify({ results: [{ title: 'Agent docs', url: 'https://example.org/docs', content: 'How the agent works' }] }),
      ),
    });
    home = await makeAgentHome();
  });

  afterEach(async () => {
    await llm.close();
    await web.close();
    await removeAgentHome(home);
  });

  /** Creates the job `status`; `env` names the job store when it is not the home's files. */
  const createJob = async (extraArgs: string[] = [], env: Record<string, string> = {}) => {
    const created = await runAgent(
      ['cron', 'create', 'every 1h', 'Check the status page', '--name', 'status', '--deliver', 'local', '--no-tick', ...extraArgs],
      {
        home,
        env: { ...LLM_KEY, ...env },
      },
    );
    expect(created).toMatchObject({ code: 0 });
  };

  it('web_extract and web_search answer in a cron run', async () => {
    await writeHomeFile(home, 'config.yaml', llmConfig(llm, 'openai', ['search:', `  searxng_url: ${web.url('')}`]));
    await createJob();
    llm.reply(
      replies.toolCalls(
        { name: 'web_extract', arguments: { url: web.url('/page') } },
        { name: 'web_search', arguments: { query: 'agent docs' } },
      ),
      replies.text('All good.'),
    );

    const run = await runAgent(['cron', 'run', 'status', '--no-tick'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    const [extract, search] = toolResults(llm.requests[1]);
    expect(extract).toContain('Title: Status page');
    expect(extract).toContain('All systems nominal.');
    expect(JSON.parse(search!)).toEqual({
      query: 'agent docs',
      results: [{ title: 'Agent docs', url: 'https://example.org/docs', snippet: 'How the agent works' }],
    });
  });

  it('web_extract answers in agent chat, through the Anthropic SDK', async () => {
    await writeHomeFile(home, 'config.yaml', llmConfig(llm, 'anthropic'));
    llm.reply(
      replies.toolCalls({ name: 'web_extract', arguments: { url: web.url('/page') } }),
      replies.text('The page says all is nominal.'),
    );

    const run = await runAgent(['chat', '-q', 'What does the status page say?'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0, stdout: 'The page says all is nominal.\n' });
    expect(llm.requests[0]!.format).toBe('anthropic');
    expect(anthropicToolResults(llm.requests[1]).join('\n')).toContain('All systems nominal.');
  });

  it('the terminal tool of a cron run sees none of the credentials the service holds, but what the operator passes through', async () => {
    await writeHomeFile(home, 'config.yaml', llmConfig(llm, 'openai', ['  terminal:', '    env_passthrough: [DEPLOY_PASSWORD]']));
    await createJob([], { AGENT_DATABASE_URL: CREDENTIALS.AGENT_DATABASE_URL! });
    llm.reply(replies.toolCalls({ name: 'terminal', arguments: { command: 'env | sort' } }), replies.text('Done.'));

    const run = await runAgent(['cron', 'run', 'status', '--no-tick'], {
      home,
      env: { ...LLM_KEY, ...CREDENTIALS, HARMLESS_SETTING: 'visible' },
    });

    expect(run).toMatchObject({ code: 0 });
    const environment = JSON.parse(toolResults(llm.requests[1])[0]!).stdout as string;
    expect(environment).toContain('HARMLESS_SETTING=visible');
    expect(environment).toContain('AGENT_CRON_RUN=');
    expect(environment).toContain('DEPLOY_PASSWORD=canary-deploy');
    for (const canary of CANARIES.filter((value) => value !== 'canary-deploy')) expect(environment).not.toContain(canary);
  });

  it('a pre-run script sees none of the credentials, and a command model only the model keys', async () => {
    const script = await writeHomeFile(home, 'scripts/env.sh', '#!/bin/sh\nenv\n');
    await chmod(script, 0o755);
    // The model program writes down what it was given: its environment and its input, which holds the script's output.
    const seen = join(home, 'model-saw.json');
    const model = await writeHomeFile(
      home,
      'env-model.mjs',
      [
        "import { writeFileSync } from 'node:fs';",
        "let input = '';",
        "process.stdin.on('data', (chunk) => (input += chunk));",
        `process.stdin.on('end', () => { writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ env: process.env, input })); console.log('Noted.'); });`,
        '',
      ].join('\n'),
    );
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...commandModelLines([process.execPath, model]), ''].join('\n'));
    await createJob(['--script', 'env.sh'], { AGENT_DATABASE_URL: CREDENTIALS.AGENT_DATABASE_URL! });

    const run = await runAgent(['cron', 'run', 'status', '--no-tick'], { home, env: CREDENTIALS });

    expect(run).toMatchObject({ code: 0 });
    const given = JSON.parse(await readFile(seen, 'utf8')) as { env: Record<string, string>; input: string };
    const scriptOutput = given.input.slice(given.input.indexOf('## Script Output'));
    expect(scriptOutput).toContain('AGENT_CRON_RUN=');
    for (const canary of CANARIES) expect(scriptOutput).not.toContain(canary);
    expect(given.env.OPENAI_API_KEY).toBe('canary-openai');
    const otherCredentials = Object.keys(CREDENTIALS).filter((name) => name !== 'OPENAI_API_KEY');
    expect(otherCredentials.filter((name) => name in given.env)).toEqual([]);
  });

  describe('in a webhook run', () => {
    const SECRET = 'route-secret';
    let port: number;
    let gateway: ChildProcess | null = null;

    beforeEach(async () => {
      port = await freePort();
    });

    afterEach(() => {
      if (gateway?.exitCode === null) gateway.kill('SIGKILL');
      gateway = null;
    });

    it('web_search answers and web_extract refuses a name that resolves to a loopback address', async () => {
      const pagePort = new URL(web.url()).port;
      await writeHomeFile(
        home,
        'config.yaml',
        llmConfig(llm, 'openai', [
          'search:',
          `  searxng_url: ${web.url('')}`,
          ...webhookListenerLines(port, SECRET),
          '        github:',
          '          prompt: "Summarise PR {number}"',
        ]),
      );
      llm.reply(
        replies.toolCalls(
          { name: 'web_extract', arguments: { url: `http://localhost:${pagePort}/page` } },
          { name: 'web_search', arguments: { query: 'agent docs' } },
        ),
        replies.text('Summary written.'),
      );
      const started = await startGatewayUntil(home, 'webhook listening on', { env: LLM_KEY });
      gateway = started.gateway;

      const response = await postPullRequestEvent(port, SECRET, 'delivery-tools', { action: 'opened', number: 7 });

      expect(response.status).toBe(202);
      expect(await eventually(() => started.output().includes('Summary written.'), 15_000)).toBe(true);
      const [extract, search] = toolResults(llm.requests[1]);
      expect(extract).toMatch(/localhost resolves to 127\.0\.0\.1, a loopback, private or otherwise non-public address/);
      expect(JSON.parse(search!).results).toHaveLength(1);
      expect(web.requests.map((request) => request.url)).toEqual(['/search?q=agent+docs&format=json']);
    });
  });
});
