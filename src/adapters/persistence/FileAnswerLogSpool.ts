import { watch, type FSWatcher } from 'node:fs';
import { access, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { errorText } from '../../domain/errors.js';
import { ensurePrivateDirectory } from './fileSystem.js';

/** An answer handed to the gateway's log. */
export interface SpooledAnswer {
  route: string;
  text: string;
  about: Record<string, string>;
}

/** How often the gateway looks into the spool besides being told by the directory watch. */
const RESCAN_MS = 1000;
/** How often a command looks whether the gateway took its answer. */
const TAKEN_POLL_MS = 25;

/**
 * `webhooks/answer-log/` under the home: how a command hands an answer delivered to `log` to the
 * gateway of this home on this machine, so that it lands in the gateway's log. A command writes
 * `<id>.json` (via a temporary name, so it appears whole); the gateway takes it by renaming it to
 * `<id>.taken` (a rename succeeds once: the gateway and a command giving up cannot both have it),
 * logs it and removes it. A command that sees no taker in time withdraws it the same way.
 */
export class FileAnswerLogSpool {
  constructor(private readonly directory: string) {}

  /**
   * Hands `answer` over and waits up to `withinMs` for the gateway to take it and write it. True
   * once taken; false when nobody took it (it is withdrawn, so nobody will).
   */
  async handOver(answer: SpooledAnswer, withinMs: number): Promise<boolean> {
    await ensurePrivateDirectory(this.directory);
    const id = randomUUID();
    const spooled = join(this.directory, `${id}.json`);
    await writeFile(join(this.directory, `${id}.tmp`), JSON.stringify(answer), { mode: 0o600 });
    await rename(join(this.directory, `${id}.tmp`), spooled);
    const deadline = Date.now() + withinMs;
    for (;;) {
      if (!(await exists(spooled))) {
        // Taken: it is in the log once the gateway has removed it (or soon after, if that takes long).
        const taken = join(this.directory, `${id}.taken`);
        while ((await exists(taken)) && Date.now() < deadline) await pause();
        return true;
      }
      if (Date.now() >= deadline) break;
      await pause();
    }
    try {
      await rename(spooled, join(this.directory, `${id}.withdrawn`));
    } catch {
      return true; // taken just now
    }
    await unlink(join(this.directory, `${id}.withdrawn`)).catch(() => undefined);
    return false;
  }

  /**
   * The gateway's side: every answer handed over, now and from now on, goes to `write`. Returns
   * the function that stops serving.
   */
  async serve(write: (answer: SpooledAnswer) => void, onProblem: (message: string) => void): Promise<() => void> {
    await ensurePrivateDirectory(this.directory);
    let scanning: Promise<void> | null = null;
    let again = false;
    const scan = () => {
      if (scanning) {
        again = true;
        return;
      }
      scanning = this.takeAll(write, onProblem).finally(() => {
        scanning = null;
        if (again) {
          again = false;
          scan();
        }
      });
    };
    let watcher: FSWatcher | null = null;
    try {
      watcher = watch(this.directory, () => scan());
      watcher.on('error', () => undefined);
    } catch (error) {
      onProblem(`cannot watch ${this.directory} (answers redelivered to the log are taken every second instead): ${errorText(error)}`);
    }
    const timer = setInterval(scan, RESCAN_MS);
    timer.unref();
    scan();
    return () => {
      clearInterval(timer);
      watcher?.close();
    };
  }

  private async takeAll(write: (answer: SpooledAnswer) => void, onProblem: (message: string) => void): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch {
      return;
    }
    for (const name of names.filter((each) => each.endsWith('.json'))) {
      const taken = join(this.directory, `${name.slice(0, -'.json'.length)}.taken`);
      try {
        await rename(join(this.directory, name), taken);
      } catch {
        continue; // withdrawn, or taken by another
      }
      try {
        const answer = JSON.parse(await readFile(taken, 'utf8')) as SpooledAnswer;
        write({
          route: String(answer.route),
          text: String(answer.text),
          about: typeof answer.about === 'object' && answer.about !== null ? answer.about : {},
        });
      } catch (error) {
        onProblem(`an answer handed to the log could not be read: ${errorText(error)}`);
      } finally {
        await unlink(taken).catch(() => undefined);
      }
    }
  }
}

function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, TAKEN_POLL_MS));
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
