import 'reflect-metadata';
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileTickLock } from '../../src/adapters/persistence/FileTickLock.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import type { TickLease } from '../../src/application/ports/TickLock.js';
import { bundleScript } from '../support/bundleScript.js';
import { exitOf, firstLineOf } from '../support/childProcesses.js';
import { spawn } from '../support/testProcesses.js';

describe('FileTickLock', () => {
  let home: string;
  let paths: AgentPaths;
  const leases: TickLease[] = [];

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-tick-'));
    paths = agentPathsFor(home);
  });

  afterEach(async () => {
    await Promise.all(leases.splice(0).map((lease) => lease.release()));
    await rm(home, { recursive: true, force: true });
  });

  async function acquire(lock: FileTickLock): Promise<TickLease | null> {
    const lease = await lock.tryAcquire();
    if (lease) leases.push(lease);
    return lease;
  }

  it('is exactly $AGENT_HOME/cron/.tick.lock while held, in a cron/ created with mode 0700', async () => {
    await acquire(new FileTickLock(paths));
    expect(paths.tickLockFile).toBe(join(home, 'cron', '.tick.lock'));
    expect(await readdir(paths.cronDir)).toEqual(['.tick.lock']);
    expect((await stat(paths.cronDir)).mode & 0o777).toBe(0o700);
  });

  it('refuses a second holder at once, also from another instance on the same home', async () => {
    expect(await acquire(new FileTickLock(paths))).not.toBeNull();
    expect(await acquire(new FileTickLock(paths))).toBeNull();
  });

  it('can be taken again once released, and releasing twice is harmless', async () => {
    const lock = new FileTickLock(paths);
    const lease = await lock.tryAcquire();
    await lease?.release();
    await lease?.release();

    expect(await readdir(paths.cronDir)).toEqual([]);
    expect(await acquire(new FileTickLock(paths))).not.toBeNull();
  });

  it('takes over a lock left by a process that died holding it once it is stale', async () => {
    const lease = await acquire(new FileTickLock(paths));
    expect(lease).not.toBeNull();
    // A dead holder stops refreshing the lock; ageing it stands in for waiting out the stale period.
    const longAgo = new Date(Date.now() - 10 * 60_000);
    await utimes(paths.tickLockFile, longAgo, longAgo);

    expect(await acquire(new FileTickLock(paths))).not.toBeNull();
  });

  it('reports a cron/ that cannot be created instead of returning null', async () => {
    await writeFile(paths.cronDir, 'not a directory');
    await expect(new FileTickLock(paths).tryAcquire()).rejects.toMatchObject({ code: 'TICK.UNAVAILABLE' });
  });

  describe('against another process', () => {
    let bundleDirectory: string;
    let child: string;

    beforeAll(async () => {
      bundleDirectory = await mkdtemp(join(tmpdir(), 'agent-tick-child-'));
      child = await bundleScript(fileURLToPath(new URL('../support/holdTickLockChild.ts', import.meta.url)), bundleDirectory);
    });

    afterAll(async () => {
      await rm(bundleDirectory, { recursive: true, force: true });
    });

    function startHolder() {
      const holder = spawn(process.execPath, [child, home], { stdio: ['pipe', 'pipe', 'pipe'] });
      return { holder, exited: exitOf(holder), firstLine: firstLineOf(holder) };
    }

    it('is refused while another process holds it, and free once that process lets go', async () => {
      const { holder, exited, firstLine } = startHolder();
      expect(await firstLine).toBe('held');

      expect(await acquire(new FileTickLock(paths))).toBeNull();

      holder.stdin.end();
      expect((await exited).code).toBe(0);
      expect(await acquire(new FileTickLock(paths))).not.toBeNull();
    });

    it('is freed by a holder that is terminated by a signal', async () => {
      const { holder, exited, firstLine } = startHolder();
      expect(await firstLine).toBe('held');

      holder.kill('SIGTERM');
      await exited;

      expect(await acquire(new FileTickLock(paths))).not.toBeNull();
    });

    it('is left behind by a holder killed outright, and taken over when stale', async () => {
      const { holder, exited, firstLine } = startHolder();
      expect(await firstLine).toBe('held');

      holder.kill('SIGKILL');
      await exited;
      expect(await acquire(new FileTickLock(paths))).toBeNull();

      const longAgo = new Date(Date.now() - 10 * 60_000);
      await utimes(paths.tickLockFile, longAgo, longAgo);
      expect(await acquire(new FileTickLock(paths))).not.toBeNull();
    });
  });
});
