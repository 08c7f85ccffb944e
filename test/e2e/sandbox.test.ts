import type { ChildProcess } from 'node:child_process';
import { chmod, readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { bubblewrapWorks } from '../support/bubblewrapWorks.js';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakeLlmServer, replies, type RecordedRequest } from '../support/fakeLlmServer.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { commandModelLines, localModelLines, webhookListenerLines } from './configLines.js';
import {
  AGENT_EXECUTABLE,
  errorSentence,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  storedJobs,
  writeHomeFile,
} from './agentCli.js';

/**
 * The sandbox as users meet it, through dist/agent.js: each line of docs/processes.md "The
 * sandbox" asserted from inside a sandboxed terminal command, pre-run script or command agent
 * program, and the recursion guard that holds without any variable.
 */

const LLM_KEY = { TEST_LLM_KEY: 'canary-llm-key' };
const SECRETS = {
  SLACK_BOT_TOKEN: 'canary-slack-xoxb',
  TELEGRAM_BOT_TOKEN: 'canary-telegram-123',
  AGENT_DASHBOARD_TOKEN: 'canary-dashboard-token-of-enough-length',
};
/** The installation, readable in the sandbox wherever the checkout lies (a clone under /tmp is hidden otherwise). */
const INSTALLATION = dirname(dirname(AGENT_EXECUTABLE));
const AGENT = `${process.execPath} ${AGENT_EXECUTABLE}`;

const bwrapWorks = await bubblewrapWorks();
// Skipped only where bubblewrap cannot make its sandbox (not installed, no user namespaces): the
// 'where bubblewrap cannot be used' cases below run there instead.
const whereBwrapWorks = bwrapWorks ? describe : describe.skip;

/** The tool results sent back to the model in a request, by call (OpenAI format). */
function terminalOutput(request: RecordedRequest | undefined): string {
  const results = (request?.body.messages ?? []).filter((message: { role: string }) => message.role === 'tool');
  return results.map((message: { content: string }) => (JSON.parse(message.content) as { stdout: string }).stdout).join('\n');
}

/** The value after `key:` on its own line of `output`. */
function line(output: string, key: string): string {
  return (
    output
      .split('\n')
      .find((text) => text.startsWith(`${key}:`))
      ?.slice(key.length + 1)
      .trim() ?? `(no ${key} line)`
  );
}

/** A shell script that tries each thing a hostile prompt would, one `key: result` line each. */
function probes(home: string): string {
  return [
    `echo "home: $(ls -A ${home} | tr '\\n' ' ')"`,
    `echo "config: $(cat ${home}/config.yaml 2>&1 | head -c 80)"`,
    'echo "owner: $(cat /proc/${AGENT_OWNER_PROCESS##*:}/environ 2>&1 | tr "\\0" " " | head -c 2000)"',
    'echo "processes: $(ps -e -o comm= | sort -u | tr "\\n" " ")"',
    `echo "store: $(echo '{}' > ${home}/cron/jobs.json 2>&1 && echo written || echo refused)"`,
    'echo "outside: $(echo x > /etc/agent-sandbox-probe 2>&1 && echo written || echo refused)"',
    'echo "workspace: $(echo x > ./made-here && pwd)"',
    `echo "create: $( (${AGENT} cron create 'every 30m' 'y' --no-tick 2>&1; echo " exit=$?") | tr '\n' ' ')"`,
    `echo "unset: $( (env -u AGENT_CRON_RUN ${AGENT} cron create 'every 30m' 'y' --no-tick 2>&1; echo " exit=$?") | tr '\n' ' ')"`,
  ].join('\n');
}

whereBwrapWorks('the sandbox, end to end', () => {
  let llm: FakeLlmServer;
  let home: string;
  let gateway: ChildProcess | null = null;

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    home = await makeAgentHome({ sandbox: true });
  });

  afterEach(async () => {
    if (gateway?.exitCode === null) gateway.kill('SIGKILL');
    gateway = null;
    await llm.close();
    await removeAgentHome(home);
  });

  const sandboxLines = ['tools:', '  sandbox: auto', `  sandbox_readable: [${JSON.stringify(INSTALLATION)}]`];

  it("a webhook run's terminal sees no home, no config, no gateway and no secret, writes only its workspace, and cannot make jobs", async () => {
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...localModelLines(llm, 'openai', { sandbox: true }),
        ...sandboxLines,
        ...webhookListenerLines(port, 'route-secret'),
        '        github:',
        '          prompt: "Look at PR {number}"',
        '          toolsets: [terminal]',
        '',
      ].join('\n'),
    );
    await runAgent(['cron', 'create', 'every 1h', 'Existing job', '--name', 'existing', '--no-tick'], { home });
    llm.reply(replies.toolCalls({ name: 'terminal', arguments: { command: probes(home) } }), replies.text('Looked.'));
    const started = await startGatewayUntil(home, 'webhook listening on', { env: { ...LLM_KEY, ...SECRETS } });
    gateway = started.gateway;

    expect((await postPullRequestEvent(port, 'route-secret', 'delivery-sandbox', { action: 'opened', number: 3 })).status).toBe(202);
    expect(await eventually(() => started.output().includes('Looked.'), 30_000)).toBe(true);

    const output = terminalOutput(llm.requests[1]);
    // The sealed home shows only the workspace; the config file is not there to read.
    expect(line(output, 'home')).toBe('workspace');
    expect(line(output, 'config')).toMatch(/No such file or directory/);
    // The gateway's pid names nothing in the sandbox's own PID namespace.
    expect(line(output, 'owner')).toMatch(/No such file or directory/);
    expect(line(output, 'processes')).not.toMatch(/\bnode\b/);
    expect(line(output, 'store')).toBe('refused');
    expect(line(output, 'outside')).toBe('refused');
    expect(line(output, 'workspace')).toBe(join(home, 'workspace'));
    expect(existsSync(join(home, 'workspace', 'made-here'))).toBe(true);
    for (const attempt of [line(output, 'create'), line(output, 'unset')]) {
      expect(attempt).toContain("cannot be used from inside the agent's sandbox");
      expect(attempt).toContain('exit=1');
    }
    for (const secret of [...Object.values(SECRETS), LLM_KEY.TEST_LLM_KEY]) expect(output).not.toContain(secret);
    expect(storedJobs(home).map((job) => job.name)).toEqual(['existing']);
  });

  it("a cron run's terminal cannot make jobs, with or without AGENT_CRON_RUN, and says it is a cron run", async () => {
    await writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...localModelLines(llm, 'openai', { sandbox: true }), ...sandboxLines, ''].join('\n'),
    );
    expect(await runAgent(['cron', 'create', 'every 1h', 'Look around', '--name', 'looker', '--no-tick'], { home })).toMatchObject({
      code: 0,
    });
    llm.reply(replies.toolCalls({ name: 'terminal', arguments: { command: probes(home) } }), replies.text('Looked.'));

    const run = await runAgent(['cron', 'run', 'looker', '--no-tick'], { home, env: LLM_KEY });

    expect(run).toMatchObject({ code: 0 });
    const output = terminalOutput(llm.requests[1]);
    for (const attempt of [line(output, 'create'), line(output, 'unset')]) {
      expect(attempt).toMatch(/cannot be used from inside a cron run \(job [0-9a-f]+\)/);
      expect(attempt).toContain('exit=1');
    }
    expect(line(output, 'store')).toBe('refused');
    expect(storedJobs(home).map((job) => job.name)).toEqual(['looker']);
  });

  it('a pre-run script and a command agent program run in it too: the script reads its own directory, the program writes the workspace', async () => {
    const script = await writeHomeFile(
      home,
      'scripts/look.sh',
      `#!/bin/sh\necho "script-home: $(ls -A ${home} | tr '\\n' ' ')"\necho "script-cwd: $(pwd)"\n`,
    );
    await chmod(script, 0o755);
    const model = await writeHomeFile(
      home,
      'sandboxed-model.mjs',
      [
        "import { readdirSync, readFileSync, writeFileSync } from 'node:fs';",
        "let input = '';",
        "process.stdin.on('data', (chunk) => (input += chunk));",
        "process.stdin.on('end', () => {",
        `  const seen = { home: readdirSync(${JSON.stringify(home)}), input, pid: process.pid, init: readFileSync('/proc/1/comm', 'utf8').trim() };`,
        "  writeFileSync('model-saw.json', JSON.stringify(seen));",
        "  console.log('Noted.');",
        '});',
        '',
      ].join('\n'),
    );
    await writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...commandModelLines([process.execPath, model], { sandbox: true }), ''].join('\n'),
    );
    expect(
      await runAgent(['cron', 'create', 'every 1h', 'Note it', '--name', 'noter', '--script', 'look.sh', '--no-tick'], { home }),
    ).toMatchObject({ code: 0 });

    const run = await runAgent(['cron', 'run', 'noter', '--no-tick'], { home, env: SECRETS });

    expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining('Noted.') });
    // The program started in the workspace (its own directory, the test's, is not visible there) and wrote there.
    const seen = JSON.parse(await readFile(join(home, 'workspace', 'model-saw.json'), 'utf8')) as {
      home: string[];
      input: string;
      pid: number;
      init: string;
    };
    expect(seen.home.sort()).toEqual(['sandboxed-model.mjs', 'workspace']);
    expect(seen.init).toBe('bwrap');
    expect(seen.pid).toBeLessThan(10);
    expect(line(seen.input, 'script-home')).toBe('scripts workspace');
    expect(line(seen.input, 'script-cwd')).toBe(join(home, 'scripts'));
  });
});

describe('where bubblewrap cannot be used', () => {
  let home: string;

  beforeAll(requireBuiltAgent);
  beforeEach(async () => {
    home = await makeAgentHome({ sandbox: true });
  });
  afterEach(async () => removeAgentHome(home));

  /** PATH without bwrap: as on a system that lacks it. */
  const withoutBwrap = { PATH: '/nonexistent/no-bin' };

  it('tools.sandbox: bwrap stops the gateway and fails config check in one sentence', async () => {
    const config = readFileSync(join(home, 'config.yaml'), 'utf8');
    await writeHomeFile(home, 'config.yaml', `${config}tools:\n  sandbox: bwrap\n`);
    const sentence =
      'tools.sandbox is bwrap, but bubblewrap (bwrap) is not installed. Install bubblewrap (the bubblewrap package), or set tools.sandbox to auto or off.';

    const started = await runAgent(['gateway'], { home, env: withoutBwrap });
    expect(started.code).toBe(1);
    expect(errorSentence(started)).toBe(`error: ${sentence}`);

    const check = await runAgent(['config', 'check'], { home, env: withoutBwrap });
    expect(check.code).toBe(1);
    expect(check.stdout + check.stderr).toContain(sentence);
  });

  it('tools.sandbox: auto warns once at start, and agent status and config check say children run without one', async () => {
    const warning =
      'tools.sandbox is auto, but bubblewrap (bwrap) is not installed. Pre-run scripts, terminal commands and command agent programs run without a sandbox.';
    const started = await startGatewayUntil(home, 'gateway started', { env: withoutBwrap });
    try {
      expect(started.output().split(warning)).toHaveLength(2);
    } finally {
      started.gateway.kill('SIGKILL');
    }
    const status = await runAgent(['status'], { home, env: withoutBwrap });
    expect(status.stdout).toContain('Sandbox: none, children run without one: bubblewrap (bwrap) is not installed.');
    const json = JSON.parse((await runAgent(['status', '--json'], { home, env: withoutBwrap })).stdout) as { sandbox: unknown };
    expect(json.sandbox).toEqual({ mode: 'auto', active: false, problem: 'bubblewrap (bwrap) is not installed.' });
    const check = await runAgent(['config', 'check'], { home, env: withoutBwrap });
    expect(check.stdout + check.stderr).toContain(warning);
  });
});
