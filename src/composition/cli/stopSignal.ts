/**
 * The gateway's stop signal: the first SIGTERM or SIGINT asks it to stop; a second
 * one, of either kind, ends the process at once with exit code 1.
 *
 * Imported by the executable's tiny entry (agent.ts) before the program is loaded, so that for
 * `agent gateway` the handlers are in place before the rest of the program has even been parsed:
 * a signal during start-up is then a stop like any other, not the default death by signal.
 */
let listening: Promise<string> | null = firstWord(process.argv.slice(2)) === 'gateway' ? listen() : null;

/** Resolves with the name of the first SIGTERM or SIGINT; listening starts at the first call at the latest. */
export function stopSignal(): Promise<string> {
  listening ??= listen();
  return listening;
}

function listen(): Promise<string> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(1);
      stopping = true;
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** The command: the first argument that is not an option. */
function firstWord(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith('-'));
}
