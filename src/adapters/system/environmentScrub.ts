import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';

/**
 * Keeping this process's credentials out of its environment (docs/adr/0015). A process of the
 * same user can read another's environment as it was started: on Linux in /proc/<pid>/environ,
 * which shows the block the process was started with, whatever the process unset since. So the
 * credentials are taken out twice: out of the live environment (`delete process.env[name]`, which
 * children started from it would inherit) and out of that block, whose `NAME=value` bytes are
 * overwritten with zeros through /proc/self/mem. What the service reads of them from then on comes
 * from `environment`, which holds them in this process's memory only.
 */

/** What taking the credentials out left where others can read it. */
export interface CredentialsLeft {
  /** Credentials (values, not the paths of `<NAME>_FILE`) the environment the system shows of this process still holds. */
  names: readonly string[];
  /** Why they are there, a phrase ("/proc/self/mem cannot be written (EACCES)"); null when none is. */
  reason: string | null;
}

/** Which variables hold a credential (the domain's isServiceCredential, with or without the configuration's model-key variables). */
export type CredentialPredicate = (name: string) => boolean;

/** The suffix of a variable that names the file holding a credential (docs/configuration.md): its value is a path. */
const FILE_SUFFIX = /_FILE$/i;

/**
 * The credentials of this process's environment, held apart from it. Made once, at the very start
 * of a command, before anything is started: a child started before would have the credentials.
 */
export class HeldCredentials {
  private readonly held = new Map<string, string>();
  private readonly predicates: CredentialPredicate[] = [];
  private readonly left = new Set<string>();
  private reason: string | null = null;
  /**
   * The environment as given (`given`, credentials included): a view of process.env, read at each
   * access (a variable set later, such as the mark of AGENT_OWNER_PROCESS, shows), in which the
   * held credentials are seen as before. Writing a credential's name keeps it here, never in process.env.
   */
  readonly environment: NodeJS.ProcessEnv;

  constructor(
    private readonly given: NodeJS.ProcessEnv,
    private readonly system: SystemEnvironment = LINUX_SYSTEM,
  ) {
    this.environment = this.view();
  }

  /**
   * Takes every variable `isCredential` names out of process.env and out of the environment the
   * system shows; `environment` keeps them. Called again with a wider predicate (the
   * configuration's model-key variables), it takes those out too. Never throws: where the system's
   * copy cannot be cleared, what it returns (and `stillShown()`) says which credentials it still shows and why.
   */
  takeOut(isCredential: CredentialPredicate): CredentialsLeft {
    this.predicates.push(isCredential);
    const inProcess = Object.keys(process.env).filter((name) => isCredential(name));
    const names = new Set([...Object.keys(this.given).filter((name) => isCredential(name)), ...inProcess]);
    for (const name of names) {
      const value = this.held.get(name) ?? this.given[name] ?? process.env[name];
      if (value !== undefined) this.held.set(name, value);
      // unsetenv: children started from process.env no longer get it, nor does getenv find it.
      delete process.env[name];
    }
    // No credential at all (given as files, say, and those read already): nothing to look for in the system's copy either.
    if (names.size === 0) return this.stillShown();
    const outcome = this.system.clear(isCredential, inProcess);
    for (const name of outcome.left) if (!FILE_SUFFIX.test(name)) this.left.add(name);
    if (outcome.reason !== null && this.left.size > 0) this.reason ??= outcome.reason;
    return this.stillShown();
  }

  /** What the system still shows others, over every takeOut so far. */
  stillShown(): CredentialsLeft {
    return { names: [...this.left].sort(), reason: this.left.size > 0 ? this.reason : null };
  }

  private isCredential(name: string): boolean {
    return this.held.has(name) || this.predicates.some((predicate) => predicate(name));
  }

  private read(name: string): string | undefined {
    return this.held.has(name) ? this.held.get(name) : process.env[name];
  }

  private view(): NodeJS.ProcessEnv {
    const descriptor = (value: string): PropertyDescriptor => ({ value, writable: true, enumerable: true, configurable: true });
    return new Proxy({} as NodeJS.ProcessEnv, {
      get: (_target, name) => (typeof name === 'string' ? this.read(name) : undefined),
      has: (_target, name) => typeof name === 'string' && this.read(name) !== undefined,
      set: (_target, name, value) => {
        if (typeof name !== 'string') return false;
        if (this.isCredential(name)) this.held.set(name, String(value));
        else process.env[name] = String(value);
        return true;
      },
      deleteProperty: (_target, name) => {
        if (typeof name === 'string') {
          this.held.delete(name);
          delete process.env[name];
        }
        return true;
      },
      defineProperty: (_target, name, attributes) => {
        if (typeof name !== 'string' || !('value' in attributes)) return false;
        if (this.isCredential(name)) this.held.set(name, String(attributes.value));
        else process.env[name] = String(attributes.value);
        return true;
      },
      ownKeys: () => [...new Set([...Object.keys(process.env), ...this.held.keys()])],
      getOwnPropertyDescriptor: (_target, name) => {
        const value = typeof name === 'string' ? this.read(name) : undefined;
        return value === undefined ? undefined : descriptor(value);
      },
    });
  }
}

/** The environment block the system shows of this process, and clearing entries of it. */
export interface SystemEnvironment {
  /**
   * Zeroes every entry whose name `isCredential` names; the names it could not clear, and why.
   * `present` names those process.env held before they were taken out of it.
   */
  clear(isCredential: CredentialPredicate, present: readonly string[]): { left: string[]; reason: string | null };
}

/**
 * Linux: the block lies between `env_start` and `env_end` (fields 50 and 51 of /proc/self/stat)
 * in this process's memory, and /proc/self/environ shows that range. /proc/self/mem writes it.
 * What is left is read back from /proc/self/environ, the kernel's own view.
 */
export class ProcSelfEnvironment implements SystemEnvironment {
  constructor(
    private readonly platform: NodeJS.Platform = process.platform,
    private readonly proc = '/proc/self',
  ) {}

  clear(isCredential: CredentialPredicate, present: readonly string[]): { left: string[]; reason: string | null } {
    if (this.platform !== 'linux') {
      // macOS's `ps eww`, for one, shows the environment a process was started with; it is not cleared from inside.
      return {
        left: [...present],
        reason: present.length > 0 ? `the environment a process was started with is cleared on Linux only, not on ${this.platform}` : null,
      };
    }
    let shown: Buffer;
    try {
      shown = readFileSync(`${this.proc}/environ`);
    } catch (error) {
      // No /proc: nobody reads environments there either.
      return { left: [], reason: `${this.proc}/environ cannot be read (${codeOf(error)})` };
    }
    if (entriesNamed(shown, isCredential).length === 0) return { left: [], reason: null };
    let reason: string | null = null;
    try {
      this.zero(isCredential);
    } catch (error) {
      reason = error instanceof BlockNotFound ? error.message : `${this.proc}/mem cannot be written (${codeOf(error)})`;
    }
    let after: Buffer;
    try {
      after = readFileSync(`${this.proc}/environ`);
    } catch {
      after = shown;
    }
    const left = [...new Set(entriesNamed(after, isCredential).map((entry) => entry.name))];
    return {
      left,
      reason: left.length > 0 ? (reason ?? `${this.proc}/environ still shows them after ${this.proc}/mem was written`) : null,
    };
  }

  private zero(isCredential: CredentialPredicate): void {
    const { start, end } = this.block();
    const fd = openSync(`${this.proc}/mem`, 'r+');
    try {
      const block = Buffer.alloc(end - start);
      const read = readSync(fd, block, 0, block.length, start);
      for (const entry of entriesNamed(block.subarray(0, read), isCredential)) {
        // NAME=value, without its terminating NUL: zeros over the entry leave the others where they are
        // (the C library's `environ` points into this block, so nothing may move).
        writeSync(fd, Buffer.alloc(entry.length), 0, entry.length, start + entry.at);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Where the block lies. The command name (field 2) is in parentheses and may hold spaces or `)`: fields are counted after its last `)`. */
  private block(): { start: number; end: number } {
    const stat = readFileSync(`${this.proc}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 3 (the state) is fields[0]: field n is fields[n - 3].
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start <= 0 || end <= start) {
      throw new BlockNotFound(`${this.proc}/stat does not say where the environment lies`);
    }
    return { start, end };
  }
}

class BlockNotFound extends Error {}

/** The entries `NAME=value` of a block of NUL-terminated entries whose NAME `isCredential` names: where each starts, and its length. */
function entriesNamed(block: Buffer, isCredential: CredentialPredicate): Array<{ name: string; at: number; length: number }> {
  const found: Array<{ name: string; at: number; length: number }> = [];
  let at = 0;
  while (at < block.length) {
    let end = block.indexOf(0, at);
    if (end === -1) end = block.length;
    const equals = block.indexOf(0x3d, at);
    if (equals > at && equals < end) {
      const name = block.toString('latin1', at, equals);
      if (isCredential(name)) found.push({ name, at, length: end - at });
    }
    at = end + 1;
  }
  return found;
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

const LINUX_SYSTEM: SystemEnvironment = new ProcSelfEnvironment();

/**
 * The one call a composition makes: `given` (the environment with `<NAME>_FILE` credentials
 * read) held apart, every credential `isCredential` names taken out of this process's
 * environment. Read the environment from the returned `environment` from then on.
 */
export function holdCredentials(given: NodeJS.ProcessEnv, isCredential: CredentialPredicate, system?: SystemEnvironment): HeldCredentials {
  const held = new HeldCredentials(given, system);
  held.takeOut(isCredential);
  return held;
}
