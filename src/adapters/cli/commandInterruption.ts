import type { Writable } from 'node:stream';
import { writeLine } from './CliIO.js';

/** The exit status a shell gives a process ended by each signal: 128 + its number. */
const EXIT_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof EXIT_CODES;

/**
 * How long a stopped command may take to kill what it started and record its runs before it
 * exits all the same: a tree kill takes well under a second, a record a few writes.
 */
const FORCE_EXIT_AFTER_MS = 10_000;

/**
 * A command that runs agents (`agent cron run`, `agent cron tick`, a command's tick, `agent
 * chat`) stopped by SIGINT, SIGTERM or SIGHUP (docs/processes.md): the first signal aborts
 * `signal`, which every run the command started was given, so that their process trees are
 * killed and their runs recorded `interrupted: …`; the command then exits with 128 + the
 * signal's number (130, 143, 129). A second signal, or a command still not done after
 * FORCE_EXIT_AFTER_MS, exits at once with that code.
 *
 * The handlers are installed by `arm()`, when the command is about to start something: a
 * command that starts nothing keeps the default (it dies of the signal, having nothing to end).
 */
export class CommandInterruption {
  private readonly controller = new AbortController();
  private received: StopSignal | null = null;
  private armed = false;

  constructor(
    private readonly stderr: Writable = process.stderr,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  /** Aborted at the first stop signal once armed; its reason says which, in words for `interrupted: …`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Installs the handlers (once). */
  arm(): void {
    if (this.armed) return;
    this.armed = true;
    for (const name of Object.keys(EXIT_CODES) as StopSignal[]) process.on(name, () => this.stop(name));
  }

  /** The exit code of the signal that stopped the command; null when none did. */
  exitCode(): number | null {
    return this.received === null ? null : EXIT_CODES[this.received];
  }

  private stop(name: StopSignal): void {
    if (this.received !== null) {
      this.exit(EXIT_CODES[this.received]);
      return;
    }
    this.received = name;
    writeLine(this.stderr, `${name} received: stopping what this command started and recording its runs as interrupted.`);
    this.controller.abort(`agent was stopped by ${name} before the run finished`);
    setTimeout(() => this.exit(EXIT_CODES[name]), FORCE_EXIT_AFTER_MS).unref();
  }
}

/** This process's: every command shares it, and the entry reads its exit code at the end. */
export const commandInterruption = new CommandInterruption();
