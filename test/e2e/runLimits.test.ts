import type { ChildProcess } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { commandModelLines, localModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';

/**
 * How many runs go on at once, through the built dist/agent.js: model sessions are bounded by
 * `agent.max_concurrent_sessions`, and the processes runs start by `agent.max_concurrent_processes`,
 * whatever the webhook run slots allow.
 */

const SECRET = 'run-limits-secret';

function listenerLines(port: number, maxConcurrentRuns: number): string[] {
  const lines = webhookListenerLines(port, SECRET);
  // The run slots and the rate limit go in beside the secret, before the routes.
  lines.splice(-1, 0, `      max_concurrent_runs: ${maxConcurrentRuns}`, '      rate_limit: 1000');
  return [...lines, '        github:', '          events: [pull_request]', '          prompt: "Handle {number}"'];
}

/** The ids of the route's recorded runs and their statuses, as `agent webhook runs --json` lists them. */
async function recordedRuns(home: string): Promise<Array<{ id: string; status: string }>> {
  const listed = await runAgent(['webhook', 'runs', 'github', '--limit', '100', '--json'], { home });
  return listed.code === 0 ? (JSON.parse(listed.stdout) as Array<{ id: string; status: string }>) : [];
}

/** The most intervals `[start, end]` open at one instant. */
function mostAtOnce(intervals: ReadonlyArray<readonly [number, number]>): number {
  const edges = intervals.flatMap(([start, end]) => [
    [start, 1],
    [end, -1],
  ]);
  // At the same instant an end goes before a start: the process had ended.
  edges.sort(([a, da], [b, db]) => a! - b! || da! - db!);
  let open = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (open += delta!));
  return most;
}

describe('run limits of the gateway', () => {
  let home: string;
  let port: number;
  let llm: FakeLlmServer | null = null;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
    port = await freePort();
  });

  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await llm?.close();
    llm = null;
    await removeAgentHome(home);
  });

  it('holds at most agent.max_concurrent_sessions model sessions at once, and every event runs once', async () => {
    llm = await FakeLlmServer.start();
    llm.always = replies.text('Handled.');
    llm.hold();
    await writeHomeFile(
      home,
      'config.yaml',
      ['timezone: UTC', ...localModelLines(llm), 'agent:', '  max_concurrent_sessions: 3', ...listenerLines(port, 10), ''].join('\n'),
    );
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on', { env: { TEST_LLM_KEY: 'k' } });
    running.push(gateway);
    // The slots allow more than the sessions: the gateway says which bound holds.
    expect(output()).toContain(
      'platforms.webhook.extra.max_concurrent_runs is 10 but agent.max_concurrent_sessions is 3: at most 3 of those runs go on at once',
    );

    for (let n = 1; n <= 8; n += 1) {
      expect((await postPullRequestEvent(port, SECRET, `delivery-${n}`, { action: 'opened', number: n })).status).toBe(202);
    }
    // Three sessions wait on the model; the others wait for a free session.
    expect(await eventually(() => output().includes('every model session is busy (agent.max_concurrent_sessions is 3)'), 20_000)).toBe(
      true,
    );
    expect(await eventually(() => llm!.inFlight === 3, 20_000)).toBe(true);
    expect(llm.peakInFlight).toBe(3);
    llm.release();

    expect(await eventually(() => llm!.requests.length === 8, 30_000)).toBe(true);
    let runs: Array<{ id: string; status: string }> = [];
    for (let tries = 0; tries < 100 && runs.filter((run) => run.status === 'ok').length < 8; tries += 1) runs = await recordedRuns(home);
    expect(runs.map((run) => run.status)).toEqual(Array(8).fill('ok'));
    expect(new Set(runs.map((run) => run.id)).size).toBe(8);
    expect(llm.peakInFlight).toBe(3);
  });

  it('starts at most agent.max_concurrent_processes command agents at once, beside more run slots', async () => {
    const log = join(home, 'agent-times.log');
    const program = await writeHomeFile(
      home,
      'agent.mjs',
      [
        "import { appendFileSync } from 'node:fs';",
        `const log = ${JSON.stringify(log)};`,
        'const started = Date.now();',
        'setTimeout(() => {',
        '  appendFileSync(log, `${started} ${Date.now()}\\n`);',
        "  process.stdout.write('done');",
        '}, 400);',
        '',
      ].join('\n'),
    );
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...commandModelLines([process.execPath, program]),
        'agent:',
        '  max_concurrent_processes: 2',
        ...listenerLines(port, 6),
        '',
      ].join('\n'),
    );
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);
    expect(output()).toContain('platforms.webhook.extra.max_concurrent_runs is 6 but agent.max_concurrent_processes is 2');

    for (let n = 1; n <= 6; n += 1) {
      expect((await postPullRequestEvent(port, SECRET, `delivery-${n}`, { action: 'opened', number: n })).status).toBe(202);
    }

    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);
    expect(await eventually(() => lines().length === 6, 60_000)).toBe(true);
    const intervals = lines().map((line) => line.split(' ').map(Number) as [number, number]);
    // Each program ran its 400 ms inside a held permit: never three at once, however slow the machine.
    expect(mostAtOnce(intervals)).toBeLessThanOrEqual(2);
  });
});
