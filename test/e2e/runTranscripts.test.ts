import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { answer, LocalWebServer } from '../support/localWebServer.js';
import { scratchDatabase } from '../support/postgres.js';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../support/freePort.js';
import { localModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';

/**
 * A run's transcript as users see it, through the built dist/agent.js: a cron run whose model
 * calls tools and then answers, its transcript in `agent runs show`, without the credentials the
 * tools came upon.
 */

const BOT_TOKEN = 'canary-telegram-transcript-123';
const LLM_KEY = 'canary-llm-transcript-key';
const ENV = { TEST_LLM_KEY: LLM_KEY, TELEGRAM_BOT_TOKEN: BOT_TOKEN };

describe('run transcripts through the built executable', () => {
  let home: string;
  let llm: FakeLlmServer;
  let web: LocalWebServer;

  beforeAll(() => requireBuiltAgent());

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    web = await LocalWebServer.start({
      '/page': answer(200, 'text/plain; charset=utf-8', `The token is ${BOT_TOKEN}. The key is ${LLM_KEY}.\n${'padding '.repeat(1000)}`),
    });
    home = await makeAgentHome();
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm, 'openai'), ''].join('\n'));
  });

  afterEach(async () => {
    await llm.close();
    await web.close();
    await removeAgentHome(home);
  });

  it('agent runs show prints the tool calls of a cron run, their cut results, and no credential', async () => {
    const created = await runAgent(['cron', 'create', 'every 1h', 'Read the page', '--name', 'reader', '--deliver', 'local', '--no-tick'], {
      home,
      env: ENV,
    });
    expect(created).toMatchObject({ code: 0 });
    llm.reply(
      replies.toolCalls({ name: 'web_extract', arguments: { url: web.url('/page') } }),
      replies.toolCalls({ name: 'terminal', arguments: { command: `echo ${BOT_TOKEN}` } }),
      replies.text('The page holds a token.'),
    );
    expect(await runAgent(['cron', 'run', 'reader', '--no-tick'], { home, env: ENV })).toMatchObject({ code: 0 });
    const runs = JSON.parse((await runAgent(['cron', 'runs', 'reader', '--json', '--no-tick'], { home, env: ENV })).stdout) as Array<{
      id: string;
    }>;

    const shown = await runAgent(['runs', 'show', runs[0]!.id, '--json'], { home, env: ENV });

    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).not.toContain(BOT_TOKEN);
    expect(shown.stdout).not.toContain(LLM_KEY);
    const run = JSON.parse(shown.stdout);
    expect(run).toMatchObject({ id: runs[0]!.id, status: 'ok', answer: 'The page holds a token.' });
    expect(run.transcript.map((entry: { type: string; name?: string }) => entry.name ?? entry.type)).toEqual([
      'model_turn',
      'web_extract',
      'model_turn',
      'terminal',
      'model_turn',
    ]);
    const [, extract, askTerminal, terminal] = run.transcript;
    expect(extract).toMatchObject({ arguments: JSON.stringify({ url: web.url('/page') }), is_error: false });
    expect(extract.result).toContain('The token is [redacted TELEGRAM_BOT_TOKEN]. The key is [redacted TEST_LLM_KEY].');
    expect(extract.cut).toMatch(/bytes cut: the result is kept to its first 4 KB$/);
    expect(askTerminal.tool_calls).toEqual([
      expect.objectContaining({ name: 'terminal', arguments: expect.stringContaining('[redacted TELEGRAM_BOT_TOKEN]') }),
    ]);
    expect(terminal.result).toContain('[redacted TELEGRAM_BOT_TOKEN]');
    for (const entry of run.transcript) expect(Date.parse(entry.ended_at)).toBeGreaterThanOrEqual(Date.parse(entry.started_at));
    // Each model turn keeps the usage its stream reported, and the record the run's sum.
    for (const entry of run.transcript.filter((each: { type: string }) => each.type === 'model_turn')) {
      expect(entry.usage).toEqual({ input_tokens: 12, output_tokens: 5, cached_input_tokens: 0 });
    }
    expect(run.usage).toMatchObject({ input_tokens: 36, output_tokens: 15, model_turns: 3, tool_calls: 2 });

    const human = await runAgent(['runs', 'show', runs[0]!.id], { home, env: ENV });
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toContain('tool web_extract');
    expect(human.stdout).toContain('Transcript (3 model turns, 2 tool calls; times in UTC):');
    expect(human.stdout).not.toContain(BOT_TOKEN);
  });

  it('keeps the transcript in PostgreSQL when the home uses a database', async () => {
    const database = await scratchDatabase();
    // Opened first: opening migrates it, as a gateway or "agent db migrate" would.
    const connection = await database.open();
    try {
      const env = { ...ENV, AGENT_DATABASE_URL: database.url };
      const created = await runAgent(
        ['cron', 'create', 'every 1h', 'Read the page', '--name', 'reader', '--deliver', 'local', '--no-tick'],
        {
          home,
          env,
        },
      );
      expect(created).toMatchObject({ code: 0 });
      llm.reply(replies.toolCalls({ name: 'web_extract', arguments: { url: web.url('/page') } }), replies.text('Read.'));
      expect(await runAgent(['cron', 'run', 'reader', '--no-tick'], { home, env })).toMatchObject({ code: 0 });
      const [run] = JSON.parse((await runAgent(['cron', 'runs', 'reader', '--json', '--no-tick'], { home, env })).stdout) as Array<{
        id: string;
      }>;

      const shown = await runAgent(['runs', 'show', run!.id, '--json'], { home, env });

      expect(shown).toMatchObject({ code: 0, stderr: '' });
      expect(shown.stdout).not.toContain(BOT_TOKEN);
      expect(JSON.parse(shown.stdout).transcript.map((entry: { type: string }) => entry.type)).toEqual([
        'model_turn',
        'tool_call',
        'model_turn',
      ]);
      expect(await connection.query('SELECT id FROM agent_run_transcripts')).toEqual([{ id: run!.id }]);
    } finally {
      await connection.close();
      await database.drop();
    }
  });

  describe('in a webhook run', () => {
    let gateway: ChildProcess | null = null;

    afterEach(() => {
      if (gateway?.exitCode === null) gateway.kill('SIGKILL');
      gateway = null;
    });

    it('keeps the transcript, scrubbed of the route secret of config.yaml', async () => {
      const port = await freePort();
      const routeSecret = 'route-secret-transcript-42';
      await writeHomeFile(
        home,
        'config.yaml',
        [
          'timezone: UTC',
          ...localModelLines(llm, 'openai'),
          ...webhookListenerLines(port, routeSecret),
          '        github:',
          '          prompt: "Summarise PR {number}"',
          '',
        ].join('\n'),
      );
      llm.reply(replies.toolCalls({ name: 'terminal', arguments: { command: `echo ${routeSecret}` } }), replies.text('Summary written.'));
      const started = await startGatewayUntil(home, 'webhook listening on', { env: ENV });
      gateway = started.gateway;

      expect((await postPullRequestEvent(port, routeSecret, 'delivery-transcript', { action: 'opened', number: 7 })).status).toBe(202);
      let id = '';
      for (const deadline = Date.now() + 15_000; id === '' && Date.now() < deadline;) {
        const runs = JSON.parse((await runAgent(['webhook', 'runs', '--json'], { home, env: ENV })).stdout) as Array<{
          id: string;
          finished_at: string | null;
        }>;
        id = runs.find((run) => run.finished_at !== null)?.id ?? '';
      }
      expect(id).not.toBe('');

      const shown = await runAgent(['runs', 'show', id, '--json'], { home, env: ENV });

      expect(shown).toMatchObject({ code: 0 });
      expect(shown.stdout).not.toContain(routeSecret);
      const run = JSON.parse(shown.stdout);
      expect(run).toMatchObject({ id, kind: 'webhook', subject: 'github' });
      expect(run.transcript[1]).toMatchObject({
        type: 'tool_call',
        name: 'terminal',
        arguments: JSON.stringify({ command: 'echo [redacted platforms.webhook.extra.secret]' }),
      });
    });
  });

  it('agent runs show refuses an unknown id in one sentence', async () => {
    const shown = await runAgent(['runs', 'show', 'nope.20260101T000000000Z'], { home, env: ENV });

    expect(shown.code).toBe(1);
    expect(shown.stdout).toBe('');
    expect(shown.stderr.trim().split('\n')).toEqual([
      'error: No run has the id "nope.20260101T000000000Z"; "agent cron runs <job> --json" and "agent webhook runs --json" list the runs with their ids.',
    ]);
  });
});
