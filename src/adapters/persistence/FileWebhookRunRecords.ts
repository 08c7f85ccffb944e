import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, InvalidWebhookError, WebhookError } from '../../domain/errors.js';
import {
  eventIdOfFileName,
  isFinalOutcome,
  parseWebhookRunRecord,
  renderWebhookRunRecord,
  webhookRunFileName,
  type WebhookRunRecord,
} from '../../domain/webhook/webhookRunRecord.js';
import type { AgentPaths, CronSettings } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { WebhookRunRecords } from '../../application/ports/WebhookRunRecords.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { webhookOutputRetention } from '../config/webhookSettings.js';
import { RecordDirectories } from './RecordDirectories.js';
import {
  fileStoreError,
  ensurePrivateDirectory,
  errnoCode,
  isPlainPathSegment,
  writeFileAtomically,
  writeFileDurably,
} from './fileSystem.js';

const ABSENT = ['ENOENT', 'ENOTDIR'];
/** Records kept in memory after their save, for the reads that follow it (a delivery reading its answer back). */
const RECENT_KEPT = 64;
/**
 * Webhook run records in `$AGENT_HOME/webhooks/output/<route>/<YYYY-MM-DD_HH-MM-SS>_<event id>.md`
 * (docs/webhooks.md): directories 0700, files 0600, every write atomic, and synced unless the
 * caller says the record need not survive a crash (`save(record, false)`): the answer written
 * before a delivery must be there after one. The time in the name is when the event was
 * received, in the configured time zone, so a later process finds an event's record from the
 * event alone; a record an older version named otherwise is found by the one listing of its
 * route directory this process makes. Each route keeps its newest
 * `platforms.webhook.extra.output_retention` records (default 50): the oldest beyond them are
 * removed every few saves (RecordDirectories), from what this process knows of the directory,
 * which it lists again now and then for the records other processes added; listing shows only
 * the newest of them.
 */
@injectable()
export class FileWebhookRunRecords implements WebhookRunRecords {
  private readonly directory: string;
  private readonly keep: number;
  private readonly timeZone: string;
  /** What is known of each route's directory (listed at the first save or find of the route). */
  private readonly directories = new RecordDirectories(eventIdOfFileName);
  /** Route and event id → the record as last saved by this process, the newest RECENT_KEPT. */
  private readonly recent = new Map<string, WebhookRunRecord>();
  /**
   * Route and event id of the records this process saved last with an outcome that is not final:
   * their runs are under way (a delivery reads its answer back from the record), so retention
   * leaves them, however many more events arrived meanwhile.
   */
  private readonly unfinished = new Set<string>();

  constructor(
    @inject(TOKENS.AgentPaths) paths: AgentPaths,
    @inject(TOKENS.CronSettings) settings: CronSettings,
    @inject(CONFIG_TOKENS.AgentConfig) config: AgentConfig,
  ) {
    this.directory = join(paths.webhooksDir, 'output');
    this.keep = webhookOutputRetention(config);
    this.timeZone = settings.timeZone;
  }

  async find(route: string, eventId: string, receivedAt?: string): Promise<WebhookRunRecord | null> {
    const directory = this.routeDirectory(route);
    plain('event id', eventId);
    const kept = this.recent.get(`${route}\n${eventId}`);
    if (kept !== undefined) return { ...kept };
    const known = await this.known(route);
    const name = known.byId.get(eventId);
    if (name !== undefined) {
      const record = await this.readRecord(join(directory, name));
      if (record !== null) return record;
    }
    // Saved by another process since the listing: named after the event, or found by listing again.
    if (receivedAt !== undefined) return this.readRecord(join(directory, webhookRunFileName({ eventId, receivedAt }, this.timeZone)));
    const listed = (await this.namesOf(directory)).find((each) => eventIdOfFileName(each) === eventId);
    return listed === undefined ? null : this.readRecord(join(directory, listed));
  }

  async save(record: WebhookRunRecord, synced = true): Promise<void> {
    const directory = this.routeDirectory(record.route);
    plain('event id', record.eventId);
    try {
      const known = await this.known(record.route);
      const existing = known.byId.get(record.eventId);
      const name = existing ?? webhookRunFileName(record, this.timeZone);
      const write = synced ? writeFileDurably : writeFileAtomically;
      await write(join(directory, name), renderWebhookRunRecord(record)).catch(async (error: unknown) => {
        // Its directory was removed meanwhile: made again.
        if (errnoCode(error) !== 'ENOENT') throw error;
        await ensurePrivateDirectory(directory);
        await write(join(directory, name), renderWebhookRunRecord(record));
      });
      this.keepRecent(record);
      const key = `${record.route}\n${record.eventId}`;
      if (isFinalOutcome(record.outcome)) this.unfinished.delete(key);
      else this.unfinished.add(key);
      if (existing === undefined) {
        const underWay = (each: string) => this.unfinished.has(`${record.route}\n${eventIdOfFileName(each)}`);
        for (const removed of await this.directories.added(directory, name, this.keep, undefined, underWay)) {
          this.recent.delete(`${record.route}\n${removed}`);
        }
      }
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.RECORD_UNAVAILABLE,
        `${fileStoreError('write', `webhook run records in ${directory}`, error)}; make it a directory this user can write to.`,
        { cause: error },
      );
    }
  }

  async list(options: { route?: string | null; limit: number }): Promise<WebhookRunRecord[]> {
    const routes = options.route ? [options.route] : await this.routeNames();
    const records = await Promise.all(
      routes.map(async (route) => {
        const directory = this.routeDirectory(route);
        return Promise.all(
          newestNames((await this.namesOf(directory)).sort().slice(-this.keep), options.limit).map((name) =>
            this.readRecord(join(directory, name)),
          ),
        );
      }),
    );
    return records
      .flat()
      .filter((record) => record !== null)
      .sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))
      .slice(0, Math.max(0, options.limit));
  }

  /** What is known of the route's directory, listed at its first use by this process; never creates anything. */
  private async known(route: string) {
    const directory = this.routeDirectory(route);
    try {
      return await this.directories.known(directory);
    } catch (error) {
      throw this.unreadable(directory, error);
    }
  }

  private keepRecent(record: WebhookRunRecord): void {
    const key = `${record.route}\n${record.eventId}`;
    this.recent.delete(key);
    // Every field is a string or null: a shallow copy is a copy.
    this.recent.set(key, { ...record });
    if (this.recent.size > RECENT_KEPT) this.recent.delete(this.recent.keys().next().value!);
  }

  private routeDirectory(route: string): string {
    return join(this.directory, plain('route name', route));
  }

  private async routeNames(): Promise<string[]> {
    try {
      const entries = await readdir(this.directory, { withFileTypes: true });
      return entries.filter((entry) => entry.isDirectory() && isPlainPathSegment(entry.name)).map((entry) => entry.name);
    } catch (error) {
      if (ABSENT.includes(errnoCode(error) ?? '')) return [];
      throw this.unreadable(this.directory, error);
    }
  }

  /** The record files of a route directory (temporary files left by a crash are not records). */
  private async namesOf(directory: string): Promise<string[]> {
    try {
      return await this.directories.namesIn(directory);
    } catch (error) {
      throw this.unreadable(directory, error);
    }
  }

  /** A record, or null when it vanished (pruned meanwhile) or is not a record. */
  private async readRecord(path: string): Promise<WebhookRunRecord | null> {
    try {
      return parseWebhookRunRecord(await readFile(path, 'utf8'));
    } catch (error) {
      if ([...ABSENT, 'EISDIR'].includes(errnoCode(error) ?? '')) return null;
      throw this.unreadable(path, error);
    }
  }

  private unreadable(path: string, error: unknown): WebhookError {
    return new WebhookError(
      ERROR_CODES.WEBHOOK.RECORD_UNREADABLE,
      `${fileStoreError('read', `webhook run records in ${path}`, error)}; give this user read access to it.`,
      { cause: error },
    );
  }
}

/** The length of the `YYYY-MM-DD_HH-MM-SS` a record's name starts with. */
const STAMP_LENGTH = 19;

/**
 * A route's newest `limit` record names, by the start time they begin with, and those started
 * in the same second as the last of them (the event id after the time says nothing of order).
 */
function newestNames(names: string[], limit: number): string[] {
  const sorted = [...names].sort().reverse();
  if (limit <= 0) return [];
  if (sorted.length <= limit) return sorted;
  const cutoff = sorted[limit - 1]!.slice(0, STAMP_LENGTH);
  return sorted.filter((name) => name.slice(0, STAMP_LENGTH) >= cutoff);
}

/** Route names and event ids become path segments: nothing may lead out of the directory. */
function plain(what: string, name: string): string {
  if (!isPlainPathSegment(name)) {
    throw new InvalidWebhookError(
      ERROR_CODES.WEBHOOK.INVALID_NAME,
      `The ${what} "${name}" cannot name a file: it holds a path separator or is empty.`,
    );
  }
  return name;
}
