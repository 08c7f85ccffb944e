import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cronRunAmongAncestors } from '../../../src/adapters/process/cronRunAncestry.js';

/** A /proc of processes given as pid → [parent, environment], in the kernel's formats. */
async function fakeProc(processes: Record<number, [number, string[]] | [number, null]>): Promise<string> {
  const proc = await mkdtemp(join(tmpdir(), 'fake-proc-'));
  for (const [pid, [parent, environment]] of Object.entries(processes)) {
    await mkdir(join(proc, pid));
    await writeFile(join(proc, pid, 'stat'), `${pid} (a (tricky) name) S ${parent} ${pid} ${pid} 0 -1 4194560\n`);
    // null: an environment this user may not read (another user's process).
    if (environment !== null) await writeFile(join(proc, pid, 'environ'), environment.map((entry) => `${entry}\0`).join(''));
  }
  return proc;
}

describe("the cron run among a process's ancestors", () => {
  let proc: string;
  afterEach(() => rm(proc, { recursive: true, force: true }));

  it('is found in the starting environment of a grandparent, past one that cannot be read', async () => {
    proc = await fakeProc({
      40: [30, ['PATH=/bin']],
      30: [20, null],
      20: [10, ['HOME=/root', 'AGENT_CRON_RUN=abc123def456']],
      10: [1, ['PATH=/bin']],
    });
    expect(cronRunAmongAncestors(40, proc)).toBe('abc123def456');
  });

  it('is null when no ancestor up to init was started by a cron run, or an empty value set', async () => {
    proc = await fakeProc({ 40: [30, ['AGENT_CRON_RUN=']], 30: [1, ['PATH=/bin']] });
    expect(cronRunAmongAncestors(40, proc)).toBeNull();
  });

  it('stops where the chain is broken or loops', async () => {
    proc = await fakeProc({ 40: [41, ['PATH=/bin']], 41: [40, ['PATH=/bin']] });
    expect(cronRunAmongAncestors(40, proc)).toBeNull();
    expect(cronRunAmongAncestors(999, proc)).toBeNull();
  });
});
