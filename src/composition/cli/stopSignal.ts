/**
 * The gateway's stop signal: the first SIGTERM, SIGINT or SIGHUP asks it to stop; a second one,
 * of any kind, ends the process at once with exit code 1. Started by npm (`npm start`), the
 * gateway also stops when npm exits, however npm was ended: npm passes SIGTERM and SIGINT on,
 * but not SIGHUP, and nothing is passed on when it is killed with -9 (docs/gateway.md).
 *
 * Imported by the executable's tiny entry (agent.ts) before the program is loaded, so that for
 * `agent gateway` the handlers are in place before the rest of the program has even been parsed:
 * a signal during start-up is then a stop like any other, not the default death by signal.
 */
let listening: Promise<string> | null = firstWord(process.argv.slice(2)) === 'gateway' ? listen() : null;

/** How often a gateway started by npm looks whether npm is still its parent. */
const PARENT_CHECK_MS = 1000;
/** What the stop is said to be for when the parent went. */
export const PARENT_EXITED = 'npm, its parent process, exited';

/**
 * Resolves with the name of the first SIGTERM, SIGINT or SIGHUP (or {@link PARENT_EXITED});
 * listening starts at the first call at the latest.
 */
export function stopSignal(): Promise<string> {
  listening ??= listen();
  return listening;
}

function listen(): Promise<string> {
  return new Promise((resolve) => {
    let stopping = false;
    const onStop = (reason: string) => {
      if (stopping) process.exit(1);
      stopping = true;
      resolve(reason);
    };
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, onStop);
    if (process.env.npm_lifecycle_event !== undefined) watchParent(() => onStop(PARENT_EXITED));
  });
}

/** Calls `gone` once this process's parent has exited (it is then adopted by another process). */
function watchParent(gone: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, PARENT_CHECK_MS);
  // The gateway keeps itself alive; this check must not keep a stopped one from exiting.
  timer.unref();
}

/** The command: the first argument that is not an option. */
function firstWord(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith('-'));
}
