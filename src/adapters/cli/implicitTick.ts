import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Claims, RunDueJobs, TickInput, TickReport } from '../../application/cron/RunDueJobs.js';
import { writeLine, type CliIO } from './CliIO.js';

/** Where the warning was given already: a chat ticking every minute says it once. */
const warned = new WeakSet<object>();

/** What the file system says when this user may not write somewhere (or nobody may). */
const CANNOT_WRITE = new Set(['EACCES', 'EPERM', 'EROFS']);

/** The file-system error behind `error` (the tick lock's or the store's), found along its causes. */
function fileSystemCause(error: unknown): NodeJS.ErrnoException | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return current as NodeJS.ErrnoException;
  }
  return null;
}

/**
 * The tick a command runs before its own work (`agent cron list`, `agent chat` …): the one place
 * that decides when it is skipped. A process started by a cron run fires no other jobs. A home
 * this user cannot write (read-only mount, someone else's home) is no reason to refuse to show
 * jobs: the tick is skipped with a one-line warning (once per process) and the command goes on.
 * Returns the report, or null when the tick was skipped.
 */
export async function implicitTick(
  runDueJobs: RunDueJobs,
  io: CliIO,
  input: TickInput = {},
  storeDir?: string,
): Promise<TickReport | null> {
  if (io.cronRun || io.sandboxed) return null;
  // Said up front too, not only when a due job met the wall: the user learns why nothing fires.
  const refused = storeDir ? await writeRefusal(storeDir) : null;
  if (refused) {
    warnSkipped(io, storeDir!, refused);
    return null;
  }
  return unlessUnwritable(
    () => runDueJobs.execute(input),
    (cause) => warnSkipped(io, cause.path ? dirname(cause.path) : 'the agent home', cause.code!),
  );
}

/**
 * `work`'s result, or null when it met a wall this user cannot write (`onRefused` hears the file
 * system's error); any other failure is thrown on.
 */
async function unlessUnwritable<T>(
  work: () => Promise<T>,
  onRefused: (cause: NodeJS.ErrnoException) => void = () => undefined,
): Promise<T | null> {
  try {
    return await work();
  } catch (error) {
    const cause = fileSystemCause(error);
    if (!cause || !CANNOT_WRITE.has(cause.code!)) throw error;
    onRefused(cause);
    return null;
  }
}

/** Before every job: no job is due by then, so a claim up to it only settles what is abandoned. */
const BEFORE_EVERY_JOB = new Date(0);

/**
 * What a command given `--no-tick` still does before its own work: the runs whose process is gone
 * are recorded interrupted and their jobs put back in service (RunDueJobs.claim with no job due),
 * so that what it shows is so. No due job is run, and no slot is missed or skipped. Skipped, like
 * the tick, inside a cron run and in a home this user cannot write, without a word: nothing was
 * asked for. Returns what was recovered, or null when skipped.
 */
export async function settleAbandoned(runDueJobs: RunDueJobs, io: CliIO, storeDir?: string): Promise<Claims | null> {
  if (io.cronRun || io.sandboxed) return null;
  if (storeDir && (await writeRefusal(storeDir))) return null;
  return unlessUnwritable(() => runDueJobs.claim({ limit: 0, dueBy: BEFORE_EVERY_JOB }));
}

function warnSkipped(io: CliIO, where: string, code: string): void {
  if (warned.has(io.stderr)) return;
  warned.add(io.stderr);
  writeLine(io.stderr, `warning: ${where} is not writable (${code}); due jobs were not run (the tick was skipped).`);
}

/** The code that says this user may not write in `dir`, or null when it may (or `dir` is yet to be made). */
async function writeRefusal(dir: string): Promise<string | null> {
  try {
    await access(dir, constants.W_OK);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && CANNOT_WRITE.has(code) ? code : null;
  }
}
