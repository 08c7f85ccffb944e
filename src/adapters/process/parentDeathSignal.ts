import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** What to spawn: the program and its arguments. */
export interface Launch {
  program: string;
  args: readonly string[];
}

/** A launch through setpriv: its stderr must be read for the word that the program never ran. */
export interface WrappedLaunch extends Launch {
  wrapped: boolean;
}

/** Where the stderr of a child goes (CappedOutput, HeadAndTailOutput). */
export interface StderrSink {
  append(chunk: Buffer): void;
}

/** Where util-linux keeps setpriv; looked for once. */
const SETPRIV_PLACES = ['/usr/bin/setpriv', '/bin/setpriv'];
let setprivFound: Promise<string | null> | null = null;

/** Whether this process may execute `path`. */
export async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function setpriv(): Promise<string | null> {
  setprivFound ??= (async () => {
    if (process.platform !== 'linux') return null;
    for (const place of SETPRIV_PLACES) if (await isExecutable(place)) return place;
    return null;
  })();
  return setprivFound;
}

/**
 * Programs found, by working directory, PATH and name: a gateway starts the same agent program
 * for every event, and looking along the PATH each time cost more than the spawn's own checks. A
 * program removed since is reported when it fails to execute (ExecFailureWatch). Bounded: the
 * oldest entries are dropped first.
 */
const found = new Map<string, string>();
const FOUND_KEPT = 256;

/** `program` as spawn would find it (a path from `cwd`, else on the PATH of `env`); null when it would not. */
export async function located(program: string, env: NodeJS.ProcessEnv, cwd: string): Promise<string | null> {
  const key = `${cwd}\0${env.PATH ?? ''}\0${program}`;
  const known = found.get(key);
  if (known !== undefined) return known;
  const path = await search(program, env, cwd);
  if (path !== null) {
    found.set(key, path);
    if (found.size > FOUND_KEPT) found.delete(found.keys().next().value!);
  }
  return path;
}

async function search(program: string, env: NodeJS.ProcessEnv, cwd: string): Promise<string | null> {
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    return (await isExecutable(path)) ? path : null;
  }
  for (const directory of (env.PATH ?? '').split(delimiter)) {
    if (directory === '') continue;
    const path = join(resolve(cwd, directory), program);
    if (await isExecutable(path)) return path;
  }
  return null;
}

/**
 * The launch of a child that the kernel kills (SIGKILL) the moment this process dies, however
 * it dies — kill -9 included: on Linux, util-linux's `setpriv --pdeathsig KILL` sets
 * PR_SET_PDEATHSIG and then executes the program in its place (same pid, same process). So a
 * command agent, a pre-run script or a terminal command cannot finish a run after the gateway or
 * `agent cron tick` that started it was killed, and a restarted gateway never sees a run it
 * repeats finish a second time. What the child itself started is found through the process-tree
 * marks (docs/processes.md).
 *
 * The launch is left as it is where this cannot be done (not Linux, no setpriv) and when the
 * program cannot be found or run, so that spawning it fails as it always did (ENOENT, EACCES).
 */
export async function dyingWithThisProcess(launch: Launch, env: NodeJS.ProcessEnv, cwd: string = process.cwd()): Promise<WrappedLaunch> {
  const wrapper = await setpriv();
  const program = wrapper === null ? null : await located(launch.program, env, cwd);
  if (wrapper === null || program === null) return { ...launch, wrapped: false };
  return { program: wrapper, args: ['--pdeathsig', 'KILL', '--', program, ...launch.args], wrapped: true };
}

/**
 * What a wrapper writes, and its exit codes, when the program could not be executed (a missing
 * interpreter, say): setpriv, and bubblewrap, which also says so when it cannot set the sandbox up.
 */
const EXEC_FAILURES: readonly { prefix: string; said: string; codes: Readonly<Record<number, string>> }[] = [
  { prefix: 'setpriv: failed to execute ', said: 'setpriv: ', codes: { 127: 'ENOENT', 126: 'EACCES' } },
  { prefix: 'bwrap: ', said: 'bwrap: ', codes: { 1: 'ESANDBOX' } },
];
const EXEC_FAILED_REASONS: Readonly<Record<string, string>> = {
  'No such file or directory': 'ENOENT',
  'Permission denied': 'EACCES',
  'Exec format error': 'ENOEXEC',
};
/** A wrapper's sentence is short; what goes on longer than this is the program's own output. */
const LONGEST_EXEC_FAILURE = 4096;

/**
 * The stderr of a wrapped child, on its way to the caller's sink: its first bytes are held back
 * while they may be the wrapper saying that the program could not be executed, so that this reads
 * as the program not starting (as spawning it directly would have said), not as its output.
 */
export class ExecFailureWatch implements StderrSink {
  private held = '';
  private passing = false;

  constructor(private readonly sink: StderrSink | undefined) {}

  append(chunk: Buffer): void {
    if (this.passing) {
      this.sink?.append(chunk);
      return;
    }
    this.held += chunk.toString('utf8');
    const mayBeFailure = EXEC_FAILURES.some(
      ({ prefix }) => prefix.startsWith(this.held) || (this.held.startsWith(prefix) && this.held.length <= LONGEST_EXEC_FAILURE),
    );
    if (!mayBeFailure) this.release();
  }

  /**
   * Once the child exited with `code`: the error of a program that never ran, or null, in which
   * case what was held back has gone on to the sink.
   */
  startError(code: number | null): NodeJS.ErrnoException | null {
    const failure = this.passing ? undefined : EXEC_FAILURES.find(({ prefix }) => this.held.startsWith(prefix));
    const errno = code === null || !failure ? undefined : failure.codes[code];
    if (failure && errno) {
      const message = this.held.slice(failure.said.length).trim().split('\n')[0]!;
      const reason = Object.keys(EXEC_FAILED_REASONS).find((text) => message.endsWith(text));
      return Object.assign(new Error(message), { code: reason ? EXEC_FAILED_REASONS[reason] : errno });
    }
    this.release();
    return null;
  }

  private release(): void {
    this.passing = true;
    if (this.held !== '') this.sink?.append(Buffer.from(this.held, 'utf8'));
    this.held = '';
  }
}
