import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/freePort.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import {
  type AgentRun,
  createJob,
  errorSentence,
  inAScratchHomeEachTest,
  makeAgentHome,
  makeDue,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
} from './agentCli.js';

/**
 * The command line is one tool: every command that prints a result prints it as one JSON document
 * with --json, every command takes --no-tick (and says so when it has no effect), and a typo gets
 * "did you mean". The commands are found by walking the help of the built executable, so that a
 * command added later is in the table below or this test fails.
 */

/** The test MCP server, behind `mcp_servers.files` of the fixture's home. */
const MCP_SERVER = fileURLToPath(new URL('../support/mcpFilesServer.mjs', import.meta.url));
const SECRET = 'cli-consistency-secret';

/** The home every command of the table runs in, with something for each to work on. */
interface Fixture {
  home: string;
  env: Record<string, string>;
  database: ScratchDatabase;
  digest: string;
  webhookRun: string;
}

interface Printing {
  /** The words after `agent` (the command and what it needs); `--json --no-tick` are added. */
  argv: (fixture: Fixture) => readonly string[];
  /** Whether the command runs due jobs first, so that --no-tick means something. */
  ticks: boolean;
  /** Run with AGENT_DATABASE_URL set to a scratch database. */
  database?: boolean;
  /** What the document must say, beyond being one JSON value. */
  check?: (json: any, fixture: Fixture) => void;
}

/** Every command (groups' subcommands by their full path): what it needs to print a result, or why it prints none. */
const COMMANDS: Readonly<Record<string, Printing | { exempt: string }>> = {
  'cron list': { argv: () => ['cron', 'list'], ticks: true, check: (jobs) => expect(jobs.length).toBeGreaterThan(0) },
  'cron show': { argv: (f) => ['cron', 'show', f.digest], ticks: true, check: (job, f) => expect(job.id).toBe(f.digest) },
  'cron runs': { argv: (f) => ['cron', 'runs', f.digest], ticks: true, check: (runs) => expect(runs[0]).toMatchObject({ status: 'ok' }) },
  'cron create': {
    argv: () => ['cron', 'create', 'every 2h', 'Made by the table', '--name', 'created'],
    ticks: true,
    check: (job) => expect(job).toMatchObject({ name: 'created', prompt: 'Made by the table', state: 'scheduled' }),
  },
  'cron edit': {
    argv: () => ['cron', 'edit', 'editable', '--prompt', 'Edited'],
    ticks: true,
    check: (job) => expect(job).toMatchObject({ name: 'editable', prompt: 'Edited' }),
  },
  'cron pause': {
    argv: () => ['cron', 'pause', 'pausable', '--reason', 'testing'],
    ticks: true,
    check: (job) => expect(job).toMatchObject({ state: 'paused', paused_reason: 'testing' }),
  },
  'cron resume': {
    argv: () => ['cron', 'resume', 'sleepy'],
    ticks: true,
    check: (job) => expect(job).toMatchObject({ name: 'sleepy', state: 'scheduled' }),
  },
  'cron run': {
    argv: () => ['cron', 'run', 'runnable'],
    ticks: true,
    check: (run) =>
      expect(run).toMatchObject({
        job_name: 'runnable',
        run_id: expect.stringMatching(/^[0-9a-f]{12}\./),
        status: 'ok',
        error: null,
        answer: 'Answer to: Run me',
        deliveries: [expect.objectContaining({ target: 'telegram', outcome: 'delivered' })],
      }),
  },
  'cron redeliver': {
    argv: (f) => ['cron', 'redeliver', f.digest],
    ticks: true,
    check: (redelivery, f) =>
      expect(redelivery).toMatchObject({
        job_id: f.digest,
        status: 'ok',
        deliveries: [expect.objectContaining({ outcome: 'delivered' })],
        last_run: true,
      }),
  },
  'cron remove': { argv: () => ['cron', 'remove', 'spare'], ticks: true, check: (job) => expect(job).toMatchObject({ name: 'spare' }) },
  'cron status': {
    argv: () => ['cron', 'status'],
    ticks: true,
    check: (status, f) => {
      expect(status).toMatchObject({ home: f.home, gateway: { state: 'running' }, next_jobs: expect.any(Array), failed_jobs: [] });
      expect(status).not.toHaveProperty('webhook_events_waiting');
    },
  },
  // The gateway runs what is due here; the runs a tick did are tested below in a quiet home.
  'cron tick': { argv: () => ['cron', 'tick'], ticks: false, check: (runs) => expect(runs).toEqual(expect.any(Array)) },
  chat: {
    argv: () => ['chat', '-q', 'Hello there'],
    ticks: true,
    check: (chat) => expect(chat).toEqual({ answer: 'Answer to: Hello there', answered_by: expect.any(String) }),
  },
  'webhook subscribe': {
    argv: () => ['webhook', 'subscribe', 'fresh', '--events', 'push'],
    ticks: false,
    check: (subscription) =>
      expect(subscription).toMatchObject({
        created: true,
        name: 'fresh',
        events: ['push'],
        secret: expect.any(String),
        url: expect.stringMatching(/\/webhooks\/fresh$/),
      }),
  },
  'webhook list': {
    argv: () => ['webhook', 'list'],
    ticks: false,
    check: (routes) => expect(routes.map((route: any) => route.name)).toContain('hooks'),
  },
  'webhook remove': {
    argv: () => ['webhook', 'remove', 'gone'],
    ticks: false,
    check: (removed) => expect(removed).toMatchObject({ name: 'gone' }),
  },
  'webhook test': {
    argv: () => ['webhook', 'test', 'hooks'],
    ticks: false,
    check: (test) =>
      expect(test).toMatchObject({
        url: expect.stringMatching(/\/webhooks\/hooks$/),
        event: 'test',
        status: 202,
        body: expect.any(String),
      }),
  },
  'webhook runs': {
    argv: () => ['webhook', 'runs'],
    ticks: false,
    check: (runs, f) => expect(runs.map((run: any) => run.id)).toContain(f.webhookRun),
  },
  'webhook redeliver': {
    argv: (f) => ['webhook', 'redeliver', f.webhookRun],
    ticks: false,
    check: (redelivery, f) => expect(redelivery).toMatchObject({ run_id: f.webhookRun, route: 'hooks' }),
  },
  'runs show': {
    argv: (f) => ['runs', 'show', f.webhookRun],
    ticks: false,
    check: (run, f) => expect(run).toMatchObject({ id: f.webhookRun, kind: 'webhook', transcript: null }),
  },
  send: {
    argv: () => ['send', 'telegram', 'Deploy finished'],
    ticks: false,
    check: (sent) =>
      expect(sent).toEqual([expect.objectContaining({ target: 'telegram', receipt: expect.objectContaining({ platform: 'telegram' }) })]),
  },
  platforms: {
    argv: () => ['platforms'],
    ticks: false,
    check: (platforms) => expect(platforms).toContainEqual(expect.objectContaining({ platform: 'telegram', configured: true })),
  },
  'channels list': {
    argv: () => ['channels', 'list'],
    ticks: false,
    check: (list) => expect(list).toMatchObject({ channels: expect.any(Array) }),
  },
  'config check': { argv: () => ['config', 'check'], ticks: false, check: (report) => expect(report).toMatchObject({ problems: 0 }) },
  status: {
    argv: () => ['status'],
    ticks: false,
    check: (status) => expect(status).toMatchObject({ gateway: { state: 'running' }, webhook_events_waiting: expect.any(Number) }),
  },
  'db migrate': {
    argv: () => ['db', 'migrate'],
    ticks: false,
    database: true,
    check: (migrated) => expect(migrated).toMatchObject({ applied: expect.any(Array) }),
  },
  'db status': {
    argv: () => ['db', 'status'],
    ticks: false,
    database: true,
    check: (status) => expect(status.migrations.length).toBeGreaterThan(0),
  },
  'db import': {
    argv: () => ['db', 'import'],
    ticks: false,
    database: true,
    check: (report) => expect(report).toMatchObject({ imported: expect.any(Array) }),
  },
  'mcp list': {
    argv: () => ['mcp', 'list'],
    ticks: false,
    check: (listed) => expect(listed.servers).toContainEqual(expect.objectContaining({ name: 'files', state: 'running' })),
  },
  'mcp test': {
    argv: () => ['mcp', 'test', 'files'],
    ticks: false,
    check: (tested) => expect(tested).toMatchObject({ name: 'files', state: 'running', tools: expect.any(Array) }),
  },
  gateway: { exempt: 'it runs until stopped and writes a log, not a result (--log-format json makes that JSON lines)' },
  'cron cancel': { exempt: 'it needs a run under way to stop; runStops.test.ts checks what it prints' },
  'events failed': { argv: () => ['events', 'failed'], ticks: false, check: (failed) => expect(failed).toEqual([]) },
  'events resend': { argv: () => ['events', 'resend', '--all'], ticks: false, check: (resent) => expect(resent).toEqual([]) },
  'events test': { exempt: 'it needs an events_out subscription and its receiver; eventsOut.test.ts checks what it prints' },
};

/** The subcommands a help text lists, by their full path (`cron list`); empty for a command without any. */
function subcommandsIn(help: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf('Commands:');
  if (start === -1) return [];
  const paths: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const usage = /^ {2}agent (.+?)(?: {2,}|$)/.exec(line)?.[1];
    if (usage === undefined) continue;
    // The command's words, up to its positionals (`cron show <job>`, `send <target> [text..]`).
    const words = usage.split(' ');
    const positional = words.findIndex((word) => /^[<[]/.test(word));
    paths.push((positional === -1 ? words : words.slice(0, positional)).join(' '));
  }
  return paths;
}

/** Every command that runs something (no subcommands), with its help text, found from `agent --help` down. */
async function leafCommands(home: string): Promise<Map<string, string>> {
  const leaves = new Map<string, string>();
  const visit = async (path: string[]): Promise<void> => {
    const help = await runAgent([...path, '--help'], { home });
    expect({ command: path.join(' '), code: help.code, stderr: help.stderr }).toEqual({ command: path.join(' '), code: 0, stderr: '' });
    const children = subcommandsIn(help.stdout);
    if (children.length === 0 && path.length > 0) leaves.set(path.join(' '), help.stdout);
    await Promise.all(children.map((child) => visit(child.split(' '))));
  };
  await visit([]);
  return leaves;
}

/** The keys of a JSON value, at any depth, that are not snake_case (every --json output spells them so). */
function keysNotSnakeCase(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => keysNotSnakeCase(item, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    ...(/^[a-z0-9]+(_[a-z0-9]+)*$/.test(key) ? [] : [`${path}.${key}`]),
    ...keysNotSnakeCase(inner, `${path}.${key}`),
  ]);
}

/** The warning lines about --no-tick that a run wrote. */
const tickWarnings = (run: AgentRun) => run.stderr.split('\n').filter((line) => line.startsWith('warning: --no-tick'));

describe('one command line', () => {
  let fixture: Fixture;
  let telegram: FakeTelegramServer;
  let gateway: { gateway: ChildProcess; output: () => string } | undefined;
  let leaves: Map<string, string>;

  beforeAll(async () => {
    requireBuiltAgent();
    telegram = await FakeTelegramServer.start();
    const port = await freePort();
    const home = await makeAgentHome({
      extraConfig: [
        'platforms:',
        '  webhook:',
        '    enabled: true',
        '    extra:',
        '      host: 127.0.0.1',
        `      port: ${port}`,
        `      secret: ${SECRET}`,
        'mcp_servers:',
        '  files:',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ${JSON.stringify([MCP_SERVER])}`,
      ].join('\n'),
    });
    const env = Object.fromEntries(Object.entries(telegram.settings).map(([key, value]) => [`TELEGRAM_${key.toUpperCase()}`, value]));
    const database = await scratchDatabase();
    fixture = { home, env, database, digest: '', webhookRun: '' };
    const agent = (...args: string[]) => runAgent(args, { home, env });

    const [digest] = await Promise.all([
      createJob(home, ['every 1h', 'Digest', '--name', 'digest', '--deliver', 'telegram']),
      ...['editable', 'pausable', 'sleepy', 'runnable', 'spare'].map((name) =>
        createJob(home, ['every 1h', name === 'runnable' ? 'Run me' : name, '--name', name, '--deliver', 'telegram']),
      ),
      ...['hooks', 'gone'].map(async (name) => expect((await agent('webhook', 'subscribe', name, '--deliver', 'log')).code).toBe(0)),
    ]);
    fixture.digest = digest as string;
    const [paused, ran] = await Promise.all([
      agent('cron', 'pause', 'sleepy', '--no-tick'),
      agent('cron', 'run', fixture.digest, '--no-tick'),
    ]);
    expect([paused.code, ran.code]).toEqual([0, 0]);

    gateway = await startGatewayUntil(home, 'webhook listening on', { args: ['--no-tick'], env });
    expect((await agent('webhook', 'test', 'hooks')).code).toBe(0);
    // Polled through the command line, each look a process start: no sleep is needed between them.
    for (const deadline = Date.now() + 15_000; fixture.webhookRun === '' && Date.now() < deadline;) {
      const runs = JSON.parse((await agent('webhook', 'runs', '--json')).stdout) as Array<{ id: string; finished_at: string | null }>;
      fixture.webhookRun = runs.find((run) => run.finished_at !== null)?.id ?? '';
    }
    if (fixture.webhookRun === '') throw new Error(`the gateway did not finish the test event's run:\n${gateway.output()}`);

    leaves = await leafCommands(home);
  }, 240_000);

  afterAll(async () => {
    if (gateway && gateway.gateway.exitCode === null) {
      gateway.gateway.kill('SIGTERM');
      await once(gateway.gateway, 'exit');
    }
    await telegram?.close();
    await fixture?.database.drop();
    if (fixture) await removeAgentHome(fixture.home);
  });

  it('has every command in the table: a new one must say what it prints with --json, or why it prints nothing', () => {
    expect([...leaves.keys()].sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it('lists --json in the help of every command that prints a result, and --tick in every help', () => {
    const missing = [...leaves].flatMap(([command, help]) => [
      ...('exempt' in COMMANDS[command]! ? [] : /^\s+--json\b/m.test(help) ? [] : [`${command}: --json`]),
      ...(/^\s+--tick\b/m.test(help) ? [] : [`${command}: --tick`]),
    ]);
    expect(missing).toEqual([]);
  });

  const printing = Object.entries(COMMANDS).filter((entry): entry is [string, Printing] => !('exempt' in entry[1]));

  it.each(printing)(
    'agent %s --json --no-tick prints one JSON document (snake_case keys), warning about --no-tick only where it has no effect',
    async (command, entry) => {
      const env = entry.database ? { ...fixture.env, AGENT_DATABASE_URL: fixture.database.url } : fixture.env;
      const run = await runAgent([...entry.argv(fixture), '--json', '--no-tick'], { home: fixture.home, env });

      expect({ command, code: run.code, stderr: run.stderr.split('\n').filter((line) => line.startsWith('error')) }).toEqual({
        command,
        code: 0,
        stderr: [],
      });
      const document = JSON.parse(run.stdout);
      expect(keysNotSnakeCase(document)).toEqual([]);
      entry.check?.(document, fixture);
      if (entry.ticks) expect(tickWarnings(run)).toEqual([]);
      else
        expect(tickWarnings(run)).toEqual([
          expect.stringMatching(new RegExp(`^warning: --no-tick has no effect on "agent ${command}": .+\\.$`)),
        ]);
    },
  );

  it('agent gateway takes --no-tick, and says in its log that the gateway fires due jobs all the same', () => {
    expect(gateway!.output()).toMatch(/^warning: --no-tick has no effect on "agent gateway": it fires due jobs on their schedule/m);
  });
});

describe('agent cron tick --json and agent cron run --json', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  it('tick prints the runs it did, and an empty list when nothing was due', async () => {
    const due = await createJob(home, ['every 1h', 'Due now', '--name', 'due', '--deliver', 'local']);
    await makeDue(home, due);

    const ticked = await runAgent(['cron', 'tick', '--json'], { home });
    const idle = await runAgent(['cron', 'tick', '--json', '--verbose'], { home });

    expect(ticked.code).toBe(0);
    expect(JSON.parse(ticked.stdout)).toEqual([
      expect.objectContaining({
        job_id: due,
        job_name: 'due',
        run_id: expect.stringMatching(new RegExp(`^${due}\\.`)),
        status: 'ok',
        answer: 'Answer to: Due now',
      }),
    ]);
    expect(idle).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(idle.stdout)).toEqual([]);
  });

  it('run prints a failed run as JSON too, and still exits 1', async () => {
    await createJob(home, ['every 1h', 'Notify', '--name', 'notify', '--deliver', 'discord:123456789012345678']);

    const run = await runAgent(['cron', 'run', 'notify', '--json', '--no-tick'], { home });

    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      job_name: 'notify',
      status: 'blocked_config',
      error: expect.stringMatching(/discord/),
      answer: null,
    });
  });
});

describe('did you mean', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  it.each([
    [['crn', 'list'], 'error: Unknown command "crn"; did you mean "cron"? (see "agent --help").'],
    [['cron', 'lsit'], 'error: Unknown command "lsit"; did you mean "list"? (see "agent cron --help").'],
    [['webhook', 'redelivr', 'x'], 'error: Unknown command "redelivr"; did you mean "redeliver"? (see "agent webhook --help").'],
    [['cron', 'list', '--jsn'], 'error: Unknown flag --jsn; did you mean --json? (see "agent cron list --help").'],
    [['status', '--no-tik'], 'error: Unknown flag --no-tik; did you mean --no-tick? (see "agent status --help").'],
    [['chat', '--query-fil', 'q.txt'], 'error: Unknown flag --query-fil; did you mean --query-file? (see "agent chat --help").'],
  ])('agent %j is refused in one sentence that names the likely intent (exit 2)', async (args, sentence) => {
    const run = await runAgent(args, { home });

    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
    expect(errorSentence(run)).toBe(sentence);
  });

  it('lists the commands when no name is close', async () => {
    const run = await runAgent(['cron', 'frobnicate'], { home });

    expect(run.code).toBe(2);
    expect(errorSentence(run)).toMatch(
      /^error: Unknown command "frobnicate"; the cron commands are: list, show, .+ \(see "agent cron --help"\)\.$/,
    );
  });
});
