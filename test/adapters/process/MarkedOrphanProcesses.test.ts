import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { MarkedOrphanProcesses, OWNER_VARIABLE } from '../../../src/adapters/process/MarkedOrphanProcesses.js';
import { eventually, isRunning } from '../../support/processLiveness.js';
import { spawn } from '../../support/testProcesses.js';

// Skipped off Linux: the marks are read from /proc/<pid>/environ, which only Linux has.
const onLinux = process.platform === 'linux' ? describe : describe.skip;

onLinux('MarkedOrphanProcesses', () => {
  const started: ChildProcess[] = [];
  const saved = process.env[OWNER_VARIABLE];

  afterEach(() => {
    for (const child of started.splice(0)) if (child.pid !== undefined && isRunning(child.pid)) process.kill(-child.pid, 'SIGKILL');
    if (saved === undefined) delete process.env[OWNER_VARIABLE];
    else process.env[OWNER_VARIABLE] = saved;
  });

  /** A shell in a session of its own that starts a second process and prints both pids. */
  async function markedTree(owner: string): Promise<number[]> {
    const child = spawn('sh', ['-c', 'sleep 60 & echo $$ $!; wait'], {
      env: { ...process.env, [OWNER_VARIABLE]: owner },
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    started.push(child);
    const line = await new Promise<string>((resolve) => child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    return line.trim().split(' ').map(Number);
  }

  it('kills every process carrying the mark of a gone process, its children included, and nothing else', async () => {
    const orphans = await markedTree('test-host:4242');
    const others = await markedTree('test-host:4243');

    expect(await new MarkedOrphanProcesses().killOrphansOf('test-host:4242')).toBe(2);

    expect(await eventually(() => orphans.every((pid) => !isRunning(pid)), 5000)).toBe(true);
    expect(others.every(isRunning)).toBe(true);
    // A claimant that is a prefix of another's is not that other.
    expect(await new MarkedOrphanProcesses().killOrphansOf('test-host:424')).toBe(0);
  });

  it("kills, in one look, what every dead owner left running, asking about each owner once, and leaves the living owners' and its own", async () => {
    const ofDead = [...(await markedTree('test-host:5001')), ...(await markedTree('test-host:5002'))];
    const ofLiving = await markedTree('test-host:5003');
    new MarkedOrphanProcesses().markChildrenOf('test-host:5004');
    const own = await markedTree('test-host:5004');
    const asked: string[] = [];

    const killed = await new MarkedOrphanProcesses().killOrphansOfTheDead((claimant) => {
      asked.push(claimant);
      return claimant === 'test-host:5001' || claimant === 'test-host:5002' || claimant === 'test-host:5004';
    });

    expect(killed).toEqual(
      new Map([
        ['test-host:5001', 2],
        ['test-host:5002', 2],
      ]),
    );
    expect(await eventually(() => ofDead.every((pid) => !isRunning(pid)), 5000)).toBe(true);
    expect([...ofLiving, ...own].every(isRunning)).toBe(true);
    // Other tests' processes may carry marks too: each claimant is asked about once.
    expect(new Set(asked).size).toBe(asked.length);
    expect(asked).not.toContain('test-host:5004');
  });

  it('marks the processes this one starts from then on', async () => {
    new MarkedOrphanProcesses().markChildrenOf('test-host:77');
    // As the service's spawners do: this process's environment, passed on.
    const child = spawn('sleep', ['60'], { env: { ...process.env }, detached: true, stdio: 'ignore' });
    started.push(child);
    // Until it has replaced itself with `sleep`, /proc shows the environment it was forked with.
    expect(await eventually(() => readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim() === 'sleep', 5000)).toBe(true);

    expect(await new MarkedOrphanProcesses().killOrphansOf('test-host:77')).toBe(1);
    expect(await eventually(() => !isRunning(child.pid!), 5000)).toBe(true);
  });

  it('finds nothing where the system lists no processes', async () => {
    expect(await new MarkedOrphanProcesses('/nonexistent-proc').killOrphansOf('test-host:1')).toBe(0);
    expect(await new MarkedOrphanProcesses('/nonexistent-proc').killOrphansOfTheDead(() => true)).toEqual(new Map());
  });
});
