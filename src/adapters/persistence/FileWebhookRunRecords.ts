import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError, InvalidWebhookError, WebhookError } from '../../domain/errors.js';
import {
  eventIdOfFileName,
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
import { describeFileSystemProblem, ensurePrivateDirectory, errnoCode, isPlainPathSegment, writeFileAtomically, writeFileDurably } from './fileSystem.js';

const ABSENT = ['ENOENT', 'ENOTDIR'];
/** Records whose file names are kept for their later saves: more than the runs that can be under way at once. */
const SAVED_NAMES_KEPT = 1000;

/**
 * Webhook run records in `$AGENT_HOME/webhooks/output/<route>/<YYYY-MM-DD_HH-MM-SS>_<event id>.md`
 * (docs/webhooks.md): directories 0700, files 0600, every write atomic, and synced unless the
 * caller says the record need not survive a crash (`save(record, false)`): the answer written
 * before a delivery must be there after one. The time in the name is the
 * run's start in the configured time zone, as for cron reports; an event keeps the file its
 * first run created. Each route keeps its newest `platforms.webhook.extra.output_retention`
 * records (default 50).
 */
@injectable()
export class FileWebhookRunRecords implements WebhookRunRecords {
  private readonly directory: string;
  private readonly keep: number;
  /** Route and event id → the file name of the record this process saved for it. */
  private readonly savedNames = new Map<string, string>();
  private readonly timeZone: string;

  constructor(
    @inject(TOKENS.AgentPaths) paths: AgentPaths,
    @inject(TOKENS.CronSettings) settings: CronSettings,
    @inject(CONFIG_TOKENS.AgentConfig) config: AgentConfig,
  ) {
    this.directory = join(paths.webhooksDir, 'output');
    this.keep = webhookOutputRetention(config);
    this.timeZone = settings.timeZone;
  }

  async find(route: string, eventId: string): Promise<WebhookRunRecord | null> {
    const directory = this.routeDirectory(route);
    // A record this process saved is where it saved it, unless pruned or removed meanwhile.
    const known = this.savedNames.get(`${route}\n${plain('event id', eventId)}`);
    const record = known === undefined ? null : await this.readRecord(join(directory, known));
    if (record !== null) return record;
    const name = (await this.namesIn(directory)).find((each) => eventIdOfFileName(each) === plain('event id', eventId));
    return name === undefined ? null : this.readRecord(join(directory, name));
  }

  async save(record: WebhookRunRecord, synced = true): Promise<void> {
    const directory = this.routeDirectory(record.route);
    plain('event id', record.eventId);
    const key = `${record.route}\n${record.eventId}`;
    try {
      // A run saves its record three or four times; the directory is listed only at its first save.
      const known = this.savedNames.get(key);
      if (known !== undefined) {
        const written = await (synced ? writeFileDurably : writeFileAtomically)(join(directory, known), renderWebhookRunRecord(record)).then(
          () => true,
          (error: unknown) => {
            // Its directory was removed meanwhile: made again below.
            if (errnoCode(error) !== 'ENOENT') throw error;
            return false;
          },
        );
        if (written) return;
      }
      await ensurePrivateDirectory(directory);
      const names = await this.namesIn(directory);
      const existing = names.find((name) => eventIdOfFileName(name) === record.eventId);
      const name = existing ?? webhookRunFileName(record, this.timeZone);
      await (synced ? writeFileDurably : writeFileAtomically)(join(directory, name), renderWebhookRunRecord(record));
      this.remember(key, name);
      if (existing === undefined) await this.prune(directory, [...names, name], name);
    } catch (error) {
      if (error instanceof AppError) throw error;
      const code = errnoCode(error);
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.RECORD_UNAVAILABLE,
        `Cannot write webhook run records in ${directory}: ${describeFileSystemProblem(code)} (${code ?? 'unknown error'}); make it a directory this user can write to.`,
        { cause: error },
      );
    }
  }

  async list(options: { route?: string | null; limit: number }): Promise<WebhookRunRecord[]> {
    const routes = options.route ? [options.route] : await this.routeNames();
    const records = await Promise.all(
      routes.map(async (route) => {
        const directory = this.routeDirectory(route);
        return Promise.all(newestNames(await this.namesIn(directory), options.limit).map((name) => this.readRecord(join(directory, name))));
      }),
    );
    return records
      .flat()
      .filter((record) => record !== null)
      .sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))
      .slice(0, Math.max(0, options.limit));
  }

  /** The file name of a record this process saved, for its next saves; the oldest are forgotten first. */
  private remember(key: string, name: string): void {
    this.savedNames.set(key, name);
    if (this.savedNames.size > SAVED_NAMES_KEPT) this.savedNames.delete(this.savedNames.keys().next().value!);
  }

  /** Deletes the oldest records beyond `keep`, never the one just written. */
  private async prune(directory: string, names: string[], justWritten: string): Promise<void> {
    const others = names.filter((name) => name !== justWritten).sort();
    const surplus = others.slice(0, Math.max(0, others.length - (this.keep - 1)));
    await Promise.all(surplus.map((name) => rm(join(directory, name), { force: true })));
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
  private async namesIn(directory: string): Promise<string[]> {
    try {
      const entries = await readdir(directory, { withFileTypes: true });
      return entries.filter((entry) => entry.isFile() && eventIdOfFileName(entry.name) !== null).map((entry) => entry.name);
    } catch (error) {
      if (ABSENT.includes(errnoCode(error) ?? '')) return [];
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
    const code = errnoCode(error);
    return new WebhookError(
      ERROR_CODES.WEBHOOK.RECORD_UNREADABLE,
      `Cannot read webhook run records in ${path}: ${describeFileSystemProblem(code)} (${code ?? 'unknown error'}); give this user read access to it.`,
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
    throw new InvalidWebhookError(ERROR_CODES.WEBHOOK.INVALID_NAME, `The ${what} "${name}" cannot name a file: it holds a path separator or is empty.`);
  }
  return name;
}
