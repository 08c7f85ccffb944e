import { chmod, readdir } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../support/freePort.js';
import { eventually, isRunning } from '../support/processLiveness.js';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { commandModelLines, localModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';
import {
  createJob,
  makeAgentHome,
  makeDue,
  removeAgentHome,
  requireBuiltAgent,
  startAgent,
  startGatewayUntil,
  writeHomeFile,
} from './agentCli.js';

/**
 * What a gateway or `agent cron tick` starts dies with it, kill -9 included: a command agent, a
 * pre-run script and a terminal command each record their pid, wait long enough to be caught,
 * then would write a file. Once the process that started them is killed with -9 they must be
 * gone, without having written it: a restarted gateway would otherwise see a run it repeats
 * finish twice.
 */
describe('children of a killed agent process', () => {
  let home: string;
  const killed: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
  });

  afterEach(async () => {
    for (const child of killed.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await removeAgentHome(home);
  });

  /** A program (node) that records its pid in `pids/`, waits 10 s, then writes `wrote/<pid>`. */
  const LATE_WRITER = [
    "import { mkdirSync, writeFileSync } from 'node:fs';",
    'const home = process.argv[2];',
    "mkdirSync(home + '/pids', { recursive: true });",
    "mkdirSync(home + '/wrote', { recursive: true });",
    "process.stdin.resume(); process.stdin.on('data', () => undefined);",
    "writeFileSync(home + '/pids/' + process.pid, '');",
    "setTimeout(() => { writeFileSync(home + '/wrote/' + process.pid, 'too late'); console.log('done'); process.exit(0); }, 10_000);",
    '',
  ].join('\n');

  const recordedPids = async (): Promise<number[]> =>
    existsSync(join(home, 'pids')) ? (await readdir(join(home, 'pids'))).map(Number) : [];

  /** Kills `agent` with -9, then waits for the recorded children to be gone; none may have written. */
  async function killAndCheck(agent: ChildProcess, expectedChildren: number): Promise<void> {
    const pids = await recordedPids();
    expect(pids).toHaveLength(expectedChildren);
    agent.kill('SIGKILL');
    await once(agent, 'exit');

    expect(await eventually(() => pids.every((pid) => !isRunning(pid)), 5_000)).toBe(true);
    expect(existsSync(join(home, 'wrote')) ? await readdir(join(home, 'wrote')) : []).toEqual([]);
  }

  it('a gateway killed with -9 takes its command agents with it', async () => {
    const port = await freePort();
    const writer = await writeHomeFile(home, 'late-writer.mjs', LATE_WRITER);
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...commandModelLines([process.execPath, writer, home]),
        ...webhookListenerLines(port, 'secret-1'),
        '        github:',
        '          prompt: "Handle {number}"',
        '',
      ].join('\n'),
    );
    const { gateway } = await startGatewayUntil(home, 'webhook listening on');
    killed.push(gateway);
    for (const number of [1, 2, 3])
      expect((await postPullRequestEvent(port, 'secret-1', `delivery-${number}`, { number })).status).toBe(202);
    expect(await eventually(() => readdirCount(join(home, 'pids')) === 3, 10_000)).toBe(true);

    await killAndCheck(gateway, 3);
  });

  it('agent cron tick killed with -9 takes the pre-run script of its run with it', async () => {
    const script = await writeHomeFile(home, 'scripts/late.mjs', LATE_WRITER.replace('process.argv[2]', JSON.stringify(home)));
    await chmod(script, 0o644);
    const id = await createJob(home, ['every 1h', 'Check', '--name', 'late', '--script', 'late.mjs', '--deliver', 'local']);
    await makeDue(home, id);
    const run = startAgent(['cron', 'tick'], { home });
    killed.push(run);
    expect(await eventually(() => readdirCount(join(home, 'pids')) === 1, 10_000)).toBe(true);

    await killAndCheck(run, 1);
  });

  it('a cron run killed with -9 takes the terminal command of its agent with it', async () => {
    const llm = await FakeLlmServer.start();
    try {
      await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
      const id = await createJob(home, ['every 1h', 'Run the long command', '--name', 'terminal', '--deliver', 'local']);
      const command = `mkdir -p "${home}/pids" "${home}/wrote"; touch "${home}/pids/$$"; sleep 10; touch "${home}/wrote/$$"`;
      llm.reply(replies.toolCalls({ name: 'terminal', arguments: { command } }));
      const run = startAgent(['cron', 'run', id], { home, env: { TEST_LLM_KEY: 'key' } });
      killed.push(run);
      expect(await eventually(() => readdirCount(join(home, 'pids')) === 1, 10_000)).toBe(true);

      await killAndCheck(run, 1);
    } finally {
      await llm.close();
    }
  });
});

/** How many entries `directory` holds; 0 while it does not exist. */
function readdirCount(directory: string): number {
  try {
    return readdirSync(directory).length;
  } catch {
    return 0;
  }
}
