import { inject, injectable } from 'inversify';
import lockfile from 'proper-lockfile';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import type { TickLease, TickLock } from '../../application/ports/TickLock.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileStoreError } from './FileStoreError.js';
import { fileStoreError, ensurePrivateDirectory, errnoCode } from './fileSystem.js';

/**
 * A tick lock not refreshed for this long was left by a process that died holding it (killed,
 * power cut) and is taken over: a dead process delays ticks by at most this much. The holder
 * refreshes it every TICK_LOCK_REFRESH_MS, so a live holder loses it only when its event loop
 * stalls for more than 25 s.
 */
export const TICK_LOCK_STALE_MS = 30_000;
const TICK_LOCK_REFRESH_MS = 5_000;

/**
 * The tick lock as a directory at exactly `$AGENT_HOME/cron/.tick.lock`, created atomically by
 * proper-lockfile (mkdir either creates it or fails). A process that exits normally or on a
 * signal removes it; one that is killed outright leaves it until it goes stale.
 */
@injectable()
export class FileTickLock implements TickLock {
  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {}

  /**
   * Takes the lock without waiting: a lease, or null at once when another holder (in this
   * process or another) has it. Throws `TICK.UNAVAILABLE` when the lock cannot be created at
   * all (permissions, read-only disk).
   */
  async tryAcquire(): Promise<TickLease | null> {
    const lockPath = this.paths.tickLockFile;
    let release: () => Promise<void>;
    try {
      await ensurePrivateDirectory(this.paths.cronDir);
      release = await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        retries: 0,
        stale: TICK_LOCK_STALE_MS,
        update: TICK_LOCK_REFRESH_MS,
        // The default handler throws from a timer and kills the process. A lost tick lock means
        // another tick may run beside this one, which the job claims already tolerate.
        onCompromised: () => undefined,
      });
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ELOCKED') return null;
      throw new FileStoreError(
        ERROR_CODES.TICK.UNAVAILABLE,
        `${fileStoreError('take', `the tick lock ${lockPath}`, error)}; make ${this.paths.cronDir} a directory this user can write to, or set AGENT_HOME to one.`,
        { cause: error },
      );
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          await release();
        } catch {
          // Lost or already gone: either way this process no longer holds it.
        }
      },
    };
  }
}
