import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { inject, injectable } from 'inversify';
import type { WebhookSubscription } from '../../domain/webhook/WebhookSubscription.js';
import { readSubscriptionRecord, readSubscriptionRecords, subscriptionRecordOf } from '../../domain/webhook/subscriptionRecord.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import {
  SubscriptionStoreError,
  type SubscriptionChange,
  type SubscriptionSnapshot,
  type WebhookSubscriptionRepository,
} from '../../application/ports/WebhookSubscriptionRepository.js';
import { LOCK_WAIT_MS, LockWaitExpired, acquireFileLock, runInTurn } from './fileLock.js';
import { fileStoreError, ensurePrivateDirectory, errnoCode, withoutByteOrderMark, writeFileDurably } from './fileSystem.js';

type Entries = Record<string, unknown>;

/**
 * Dynamic subscriptions in `$AGENT_HOME/webhook_subscriptions.json`: one object
 * keyed by name, mode 0600, replaced atomically and synced on every write (it holds secrets).
 * Updates hold the kernel's lock on `webhook_subscriptions.json.lock` (fileLock.ts) so that `agent webhook`
 * commands in several terminals never lose one another's change; reads need no lock.
 *
 * `load` keeps the last snapshot with the file's identity (inode, size, modification time):
 * every write renames a new file into place, so a changed file always looks different, and an
 * unchanged one costs one `stat`.
 */
@injectable()
export class FileSubscriptionRepository implements WebhookSubscriptionRepository {
  private readonly file: string;
  private cached: { identity: string; snapshot: SubscriptionSnapshot } | null = null;

  constructor(@inject(TOKENS.AgentPaths) paths: AgentPaths) {
    this.file = paths.webhookSubscriptionsFile;
  }

  /** The file is read afresh whenever it changed: the same as `load`. */
  reload(): Promise<SubscriptionSnapshot> {
    return this.load();
  }

  async load(): Promise<SubscriptionSnapshot> {
    const identity = await this.identity();
    if (this.cached?.identity === identity) return this.cached.snapshot;
    const snapshot = readSubscriptionRecords(Object.entries((await this.read()) ?? {}));
    this.cached = { identity, snapshot };
    return snapshot;
  }

  update<T>(name: string, change: (current: WebhookSubscription | null) => SubscriptionChange<T>): Promise<T> {
    return runInTurn(resolve(this.file), async () => {
      await this.guard('write', () => ensurePrivateDirectory(dirname(this.file)));
      const lock = await this.lock();
      try {
        const entries = (await this.read()) ?? {};
        const reading = Object.hasOwn(entries, name) ? readSubscriptionRecord(name, entries[name]) : null;
        const current = reading?.ok ? reading.subscription : null;
        const { next, result } = change(current);
        if (next === current) return result;
        const updated = { ...entries };
        if (next === null) delete updated[name];
        else updated[name] = subscriptionRecordOf(next);
        await this.guard('write', () => writeFileDurably(this.file, `${JSON.stringify(updated, null, 2)}\n`));
        return result;
      } finally {
        await lock.release();
      }
    });
  }

  /** What identifies this version of the file; `absent` when there is none. */
  private async identity(): Promise<string> {
    try {
      const info = await stat(this.file);
      return `${info.ino}:${info.size}:${info.mtimeMs}`;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return 'absent';
      throw this.unavailable('read', error);
    }
  }

  /** The stored object, or null when there is no file. Throws when it is not a subscription store. */
  private async read(): Promise<Entries | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return null;
      throw this.unavailable('read', error);
    }
    let document: unknown;
    try {
      document = JSON.parse(withoutByteOrderMark(text));
    } catch (error) {
      throw new SubscriptionStoreError(
        'damaged',
        `${this.file} is not valid JSON (${(error as Error).message}); fix it or remove it, then try again.`,
        { cause: error },
      );
    }
    if (!isJsonObject(document)) {
      throw new SubscriptionStoreError(
        'damaged',
        `${this.file} is not an object of subscriptions by name; fix it or remove it, then try again.`,
      );
    }
    return document;
  }

  private async lock() {
    try {
      return await acquireFileLock(`${this.file}.lock`);
    } catch (error) {
      if (!(error instanceof LockWaitExpired)) throw this.unavailable('lock', error);
      throw new SubscriptionStoreError(
        'unavailable',
        `Cannot change ${this.file}: another agent process has held its lock ${this.file}.lock for more than ${LOCK_WAIT_MS / 1000} seconds (is one stopped, e.g. with Ctrl-Z?); let it go on or end it, then try again.`,
        { cause: error },
      );
    }
  }

  private async guard<T>(action: 'read' | 'write', work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.unavailable(action, error);
    }
  }

  private unavailable(action: 'read' | 'write' | 'lock', error: unknown): SubscriptionStoreError {
    return new SubscriptionStoreError(
      'unavailable',
      `${fileStoreError(action, `the webhook subscriptions ${this.file}`, error)}; make ${dirname(this.file)} a directory this user can write to, or set AGENT_HOME to one.`,
      { cause: error },
    );
  }
}
