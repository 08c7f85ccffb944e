import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeLlmServer, replies, type RecordedRequest } from '../support/fakeLlmServer.js';
import { freePort } from '../support/freePort.js';
import { eventually, isRunning } from '../support/processLiveness.js';
import { registerPid, spawn } from '../support/testProcesses.js';
import { localModelLines, webhookListenerLines } from './configLines.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { bubblewrapWorks } from '../support/bubblewrapWorks.js';

/**
 * MCP servers through the built executable (docs/mcp.md): the test server on the official SDK
 * (test/support/mcpFilesServer.mjs) behind `mcp_servers.files`, a model on a local fake that
 * calls its tools, and the runs that are granted `mcp:files` and those that are not.
 */

const SERVER = fileURLToPath(new URL('../support/mcpFilesServer.mjs', import.meta.url));
const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const LLM_KEY = { TEST_LLM_KEY: 'canary-llm-key' };
const SECRET = 'route-secret';

/** The tool names offered in a recorded request (OpenAI format). */
function offeredTools(request: RecordedRequest | undefined): string[] {
  return ((request?.body.tools ?? []) as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
}

function toolResults(request: RecordedRequest | undefined): string[] {
  return ((request?.body.messages ?? []) as Array<{ role: string; content: string }>)
    .filter((message) => message.role === 'tool')
    .map((message) => message.content);
}

const bwrapWorks = await bubblewrapWorks();
// Skipped only where bubblewrap cannot make its sandbox; the other cases run without it.
const whereBwrapWorks = bwrapWorks ? describe : describe.skip;

describe('MCP servers through the built executable', () => {
  let home: string;
  let shared: string;
  let llm: FakeLlmServer;
  let gateway: ChildProcess | null = null;

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    home = await makeAgentHome();
    shared = join(home, 'shared');
    await mkdir(shared);
    await writeFile(join(shared, 'notes.txt'), 'the launch is on Tuesday');
  });

  afterEach(async () => {
    if (gateway?.exitCode === null) gateway.kill('SIGKILL');
    gateway = null;
    await llm.close();
    await removeAgentHome(home);
  });

  /** `agent webhook runs --json` once `done` holds for it (or after a deadline). */
  const webhookRunsUntil = async (done: (runs: Array<Record<string, unknown>>) => boolean) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const runs = JSON.parse((await runAgent(['webhook', 'runs', '--json'], { home })).stdout) as Array<Record<string, unknown>>;
      if (done(runs) || Date.now() > deadline) return runs;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  /** config.yaml with the fake model, `mcp_servers.files` (plus `serverLines` under it) and `extra`. */
  const configure = (serverLines: string[] = [], extra: string[] = []) =>
    writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...localModelLines(llm),
        'mcp_servers:',
        '  files:',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ${JSON.stringify([SERVER, shared])}`,
        ...serverLines,
        '  broken:',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ${JSON.stringify([SERVER, shared])}`,
        '    env: {MCP_FAIL_START: "the shared folder is not mounted"}',
        ...extra,
        '',
      ].join('\n'),
    );

  it('a cron job that is not granted mcp:files never sees its tools', async () => {
    await configure();
    expect(
      await runAgent(['cron', 'create', 'every 1h', 'What is new?', '--name', 'plain', '--deliver', 'local', '--no-tick'], { home }),
    ).toMatchObject({ code: 0 });
    llm.reply(replies.text('Nothing new.'));

    const run = await runAgent(['cron', 'run', 'plain', '--no-tick'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    expect(offeredTools(llm.requests[0])).toEqual(expect.arrayContaining(['terminal']));
    expect(offeredTools(llm.requests[0]).filter((name) => name.startsWith('mcp__'))).toEqual([]);
  });

  it('a cron job granted mcp:files with --toolset calls its tool and delivers the answer; one naming an unknown server is refused', async () => {
    await configure();
    const created = await runAgent(
      [
        'cron',
        'create',
        'every 1h',
        'When is the launch?',
        '--name',
        'granted',
        '--toolset',
        'mcp:files',
        '--deliver',
        'local',
        '--no-tick',
      ],
      { home },
    );
    expect(created).toMatchObject({ code: 0 });
    const refused = await runAgent(
      ['cron', 'create', 'every 1h', 'x', '--name', 'typo', '--toolset', 'mcp:filez', '--deliver', 'local', '--no-tick'],
      { home },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/filez/);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    llm.reply(replies.toolCalls({ name: 'mcp__files__read_file', arguments: { path: 'notes.txt' } }), replies.text('Launch: Tuesday.'));

    const run = await runAgent(['cron', 'run', 'granted', '--no-tick', '--json'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    expect(offeredTools(llm.requests[0]).filter((name) => name.startsWith('mcp__'))).toEqual(
      expect.arrayContaining(['mcp__files__read_file', 'mcp__files__list_files']),
    );
    expect(offeredTools(llm.requests[0])).not.toContain('cronjob');
    expect(toolResults(llm.requests[1])).toEqual(['the launch is on Tuesday']);
    expect(run.stdout).toContain('Launch: Tuesday.');
  });

  it('a server that names agent-cron among its presets is offered to every cron job on that preset, and not to one with its own toolsets', async () => {
    await configure(['    presets: [agent-cron]']);
    for (const [name, extra] of [
      ['preset', []],
      ['own', ['--toolset', 'web']],
    ] as const) {
      const created = await runAgent(
        ['cron', 'create', 'every 1h', 'Anything?', '--name', name, ...extra, '--deliver', 'local', '--no-tick'],
        {
          home,
        },
      );
      expect(created).toMatchObject({ code: 0 });
    }
    llm.reply(replies.text('Nothing.'), replies.text('Nothing.'));

    expect(await runAgent(['cron', 'run', 'preset', '--no-tick'], { home, env: LLM_KEY })).toMatchObject({ code: 0 });
    expect(await runAgent(['cron', 'run', 'own', '--no-tick'], { home, env: LLM_KEY })).toMatchObject({ code: 0 });

    expect(offeredTools(llm.requests[0])).toEqual(expect.arrayContaining(['terminal', 'mcp__files__read_file']));
    expect(offeredTools(llm.requests[0]).filter((name) => name.startsWith('mcp__broken'))).toEqual([]);
    expect(offeredTools(llm.requests[1]).filter((name) => name.startsWith('mcp__'))).toEqual([]);
  });

  it("config check refuses a preset that does not exist among a server's presets", async () => {
    await configure(['    presets: [agent-everything]']);
    const checked = await runAgent(['config', 'check'], { home });
    expect(checked.code).not.toBe(0);
    expect(checked.stdout + checked.stderr).toMatch(/mcp_servers\.files\.presets.*agent-cron, agent-chat, agent-webhook/);
  });

  describe('in webhook runs', () => {
    let port: number;

    beforeEach(async () => {
      port = await freePort();
    });

    const routes = () => [
      ...webhookListenerLines(port, SECRET),
      '        github:',
      '          prompt: "Read the notes for PR {number}"',
      '          toolsets: [agent-webhook, "mcp:files:read_file"]',
      '        plain:',
      '          prompt: "Nothing to read for PR {number}"',
      '        blocked:',
      '          prompt: "Read the notes for PR {number}"',
      '          toolsets: [web, "mcp:broken"]',
    ];

    it('a route granted one tool of mcp:files calls it and delivers the answer built on its result', async () => {
      await configure([], routes());
      llm.reply(replies.toolCalls({ name: 'mcp__files__read_file', arguments: { path: 'notes.txt' } }), replies.text('Launch: Tuesday.'));
      const started = await startGatewayUntil(home, 'webhook listening on', { env: LLM_KEY });
      gateway = started.gateway;

      expect((await postPullRequestEvent(port, SECRET, 'delivery-mcp', { action: 'opened', number: 7 })).status).toBe(202);

      expect(await eventually(() => started.output().includes('Launch: Tuesday.'), 20_000)).toBe(true);
      expect(offeredTools(llm.requests[0]).filter((name) => name.startsWith('mcp__'))).toEqual(['mcp__files__read_file']);
      const tool = (llm.requests[0]!.body.tools as Array<{ function: { name: string; description: string; parameters: unknown } }>).find(
        (entry) => entry.function.name === 'mcp__files__read_file',
      );
      expect(tool!.function.description).toBe('Read one file of the shared folder and return its text.');
      expect(tool!.function.parameters).toMatchObject({ type: 'object', required: ['path'] });
      expect(toolResults(llm.requests[1])).toEqual(['the launch is on Tuesday']);
    });

    it('the gateway keeps the server for later runs and stops it when it stops', async () => {
      await configure(
        [],
        [
          ...webhookListenerLines(port, SECRET),
          '        github:',
          '          prompt: "PR {number}"',
          '          toolsets: ["mcp:files:pid"]',
        ],
      );
      llm.reply(
        replies.toolCalls({ name: 'mcp__files__pid', arguments: {} }),
        replies.text('First.'),
        replies.toolCalls({ name: 'mcp__files__pid', arguments: {} }),
        replies.text('Second.'),
      );
      const started = await startGatewayUntil(home, 'webhook listening on', { env: LLM_KEY });
      gateway = started.gateway;
      expect(started.output()).toContain('MCP servers: files, broken (each started when a run first needs it');

      expect((await postPullRequestEvent(port, SECRET, 'delivery-1', { number: 1 })).status).toBe(202);
      expect(await eventually(() => started.output().includes('First.'), 20_000)).toBe(true);
      expect((await postPullRequestEvent(port, SECRET, 'delivery-2', { number: 2 })).status).toBe(202);
      expect(await eventually(() => started.output().includes('Second.'), 20_000)).toBe(true);

      const [first, second] = [toolResults(llm.requests[1])[0], toolResults(llm.requests[3])[0]].map(Number);
      registerPid(first!);
      expect(second).toBe(first);
      expect(isRunning(first!)).toBe(true);
      gateway.kill('SIGTERM');
      expect(await eventually(() => gateway!.exitCode !== null, 20_000)).toBe(true);
      expect(gateway.exitCode).toBe(0);
      expect(await eventually(() => !isRunning(first!))).toBe(true);
    });

    it('a route that names a server that does not start is blocked_config with one sentence, and other routes go on', async () => {
      await configure([], routes());
      llm.reply(replies.text('Plain answer.'));
      const started = await startGatewayUntil(home, 'webhook listening on', { env: LLM_KEY });
      gateway = started.gateway;

      expect((await postPullRequestEvent(port, SECRET, 'delivery-blocked', { number: 8 }, 'blocked')).status).toBe(202);
      expect((await postPullRequestEvent(port, SECRET, 'delivery-plain', { number: 9 }, 'plain')).status).toBe(202);

      expect(await eventually(() => started.output().includes('Plain answer.'), 20_000)).toBe(true);
      const runs = await webhookRunsUntil((listed) => listed.some((run) => run.route === 'blocked' && run.status === 'blocked_config'));
      const blocked = runs.find((run) => run.route === 'blocked')!;
      expect(String(blocked.error)).toMatch(
        /^The MCP server "broken" could not be started or did not list its tools: it exited \(it wrote: files: the shared folder is not mounted\)/,
      );
      // The model was asked only for the plain route's run.
      expect(llm.requests).toHaveLength(1);
    });
  });

  describe('in agent chat, which offers every enabled server', () => {
    it('calls a tool of the server and answers with its result', async () => {
      await configure();
      llm.reply(replies.toolCalls({ name: 'mcp__files__list_files', arguments: {} }), replies.text('One file: notes.txt'));

      const run = await runAgent(['chat', '-q', 'Which files are shared?'], { home, env: LLM_KEY });

      expect(run).toMatchObject({ code: 0, stdout: 'One file: notes.txt\n' });
      expect(offeredTools(llm.requests[0])).toEqual(
        expect.arrayContaining(['mcp__files__read_file', 'mcp__files__list_files', 'mcp__files__crash', 'mcp__files__hang']),
      );
      expect(toolResults(llm.requests[1])).toEqual(['notes.txt']);
    });

    it('goes on after the server crashed in the middle of a call: the next call starts it again', async () => {
      await configure();
      llm.reply(
        replies.toolCalls({ name: 'mcp__files__crash', arguments: {} }),
        replies.toolCalls({ name: 'mcp__files__read_file', arguments: { path: 'notes.txt' } }),
        replies.text('Recovered.'),
      );

      const run = await runAgent(['chat', '-q', 'Read the notes'], { home, env: LLM_KEY });

      expect(run).toMatchObject({ code: 0, stdout: 'Recovered.\n' });
      expect(toolResults(llm.requests[1])[0]).toMatch(
        /^error: the MCP server "files" stopped during the call .*; it starts again at the next call$/,
      );
      expect(toolResults(llm.requests[2])[1]).toBe('the launch is on Tuesday');
    });

    it('kills the server and what it started when a call outlives timeout_seconds', async () => {
      const pidFile = join(home, 'mcp.pids');
      await configure(['    timeout_seconds: 1', `    env: {MCP_PID_FILE: ${JSON.stringify(pidFile)}}`]);
      llm.reply(replies.toolCalls({ name: 'mcp__files__hang', arguments: {} }), replies.text('Gave up.'));

      const run = await runAgent(['chat', '-q', 'Hang'], { home, env: LLM_KEY });

      expect(run).toMatchObject({ code: 0, stdout: 'Gave up.\n' });
      expect(toolResults(llm.requests[1])).toEqual([
        'error: the tool "hang" of the MCP server "files" did not answer within 1 s; the server was stopped and starts again at the next call',
      ]);
      expect(existsSync(pidFile)).toBe(true);
      const pids = readFileSync(pidFile, 'utf8').split(' ').map(Number);
      pids.forEach(registerPid);
      expect(await eventually(() => pids.every((pid) => !isRunning(pid)))).toBe(true);
    });
  });

  it('a server over streamable HTTP serves a run, with a header whose ${NAME} comes from the environment', async () => {
    const server = spawn(process.execPath, [SERVER, shared, '--http', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, MCP_REQUIRED_TOKEN: 'http-token' },
    });
    const port = await new Promise<string>((resolve, reject) => {
      let seen = '';
      server.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        const match = /listening (\d+)/.exec(seen);
        if (match) resolve(match[1]!);
      });
      server.once('exit', () => reject(new Error(`the server exited: ${seen}`)));
    });
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...localModelLines(llm),
        'mcp_servers:',
        '  remote:',
        `    url: http://127.0.0.1:${port}/mcp`,
        '    headers: {Authorization: "Bearer ${REMOTE_TOKEN}"}',
        '',
      ].join('\n'),
    );
    llm.reply(replies.toolCalls({ name: 'mcp__remote__read_file', arguments: { path: 'notes.txt' } }), replies.text('Tuesday, remotely.'));

    const run = await runAgent(['chat', '-q', 'When is the launch?'], { home, env: { ...LLM_KEY, REMOTE_TOKEN: 'http-token' } });

    expect(run).toMatchObject({ code: 0, stdout: 'Tuesday, remotely.\n' });
    expect(toolResults(llm.requests[1])).toEqual(['the launch is on Tuesday']);
    server.kill('SIGKILL');
  });

  describe('agent mcp', () => {
    it('list shows each server, its state and its tools with the tokens of their schemas', async () => {
      await configure([], ['  off:', '    url: http://127.0.0.1:9/mcp', '    enabled: false']);

      const run = await runAgent(['mcp', 'list', '--json'], { home });

      expect(run).toMatchObject({ code: 0 });
      const { servers } = JSON.parse(run.stdout) as { servers: Array<Record<string, any>> };
      expect(servers.map(({ name, transport, state }) => ({ name, transport, state }))).toEqual([
        { name: 'files', transport: 'stdio', state: 'running' },
        { name: 'broken', transport: 'stdio', state: 'failed' },
        { name: 'off', transport: 'http', state: 'disabled' },
      ]);
      expect(servers[0]!.tools[0]).toEqual({
        name: 'mcp__files__read_file',
        tool: 'read_file',
        description: 'Read one file of the shared folder and return its text.',
        schema_tokens: expect.any(Number),
      });
      expect(servers[0]!.schema_tokens).toBeGreaterThan(0);
      expect(servers[1]!.problem).toMatch(/^The MCP server "broken" could not be started/);
    });

    it('test starts one server and lists its tools; one that does not start exits 1 with one sentence', async () => {
      await configure();

      const ok = await runAgent(['mcp', 'test', 'files'], { home });
      const failed = await runAgent(['mcp', 'test', 'broken'], { home });
      const unknown = await runAgent(['mcp', 'test', 'github'], { home });

      expect(ok).toMatchObject({ code: 0 });
      expect(ok.stdout).toMatch(/^files \(stdio\): running, 6 tool\(s\), about \d+ tokens of schemas\n/);
      expect(ok.stdout).toMatch(/\n {2}mcp__files__read_file +\d+ tokens {2}Read one file of the shared folder and return its text\.\n/);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/^error: The MCP server "broken" could not be started or did not list its tools: .*\.\n$/);
      expect(unknown).toMatchObject({
        code: 1,
        stderr: 'error: The MCP server "github" is not configured; the configured ones are files, broken.\n',
      });
    });
  });

  whereBwrapWorks('in the sandbox', () => {
    it('a stdio server runs confined: it cannot read the home and sees no credential it is not given', async () => {
      const inside = join(home, 'workspace', 'shared');
      await mkdir(inside, { recursive: true });
      await writeFile(join(inside, 'notes.txt'), 'inside the workspace');
      llm.reply(
        replies.toolCalls(
          { name: 'mcp__files__read_file', arguments: { path: 'notes.txt' } },
          { name: 'mcp__files__read_file', arguments: { path: '../../config.yaml' } },
          { name: 'mcp__files__show_env', arguments: { name: 'GIVEN_TOKEN' } },
          { name: 'mcp__files__show_env', arguments: { name: 'TELEGRAM_BOT_TOKEN' } },
        ),
        replies.text('Done.'),
      );
      await writeHomeFile(
        home,
        'config.yaml',
        [
          'timezone: UTC',
          ...localModelLines(llm, 'openai', { sandbox: true }),
          // The server's modules lie in this checkout, which may be in the temporary directory the sandbox hides (a CI clone in /tmp).
          'tools:',
          `  sandbox_readable: [${JSON.stringify(CHECKOUT)}]`,
          'mcp_servers:',
          '  files:',
          `    command: ${JSON.stringify(process.execPath)}`,
          `    args: ${JSON.stringify([SERVER, inside])}`,
          '    env: {GIVEN_TOKEN: "${GIVEN_TOKEN}"}',
          '',
        ].join('\n'),
      );

      const run = await runAgent(['chat', '-q', 'Look around'], {
        home,
        env: { ...LLM_KEY, GIVEN_TOKEN: 'given-123', TELEGRAM_BOT_TOKEN: 'canary-telegram' },
      });

      expect(run).toMatchObject({ code: 0, stdout: 'Done.\n' });
      const [notes, config, given, held] = toolResults(llm.requests[1]);
      expect(notes).toBe('inside the workspace');
      expect(config).toMatch(/^error: cannot read \.\.\/\.\.\/config\.yaml: ENOENT/);
      expect(given).toBe('given-123');
      expect(held).toBe('unset');
    });
  });
});
