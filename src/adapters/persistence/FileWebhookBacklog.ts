import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import type { AgentPaths } from '../../application/ports/Settings.js';
import type { WebhookBacklog } from '../../application/ports/WebhookBacklog.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { WebhookError } from '../../domain/errors.js';
import { describeFileSystemProblem, errnoCode, isDurableWriteTemporary } from './fileSystem.js';
import { legacyEventFiles, legacyEventOf } from './legacyInboxLayout.js';
import { JournalReader, journalOwner } from './webhookJournal.js';

/**
 * Counts the events waiting in `$AGENT_HOME/webhooks/inbox/` by reading its journals (and the
 * one-file-per-event layout of earlier versions) as they stand: nothing is opened for writing and
 * no journal's lock is taken, so the gateway owning them is never disturbed. A record being
 * appended at that instant is not counted yet; damaged lines are skipped (the inbox itself sets
 * them aside when it next reads them).
 */
@injectable()
export class FileWebhookBacklog implements WebhookBacklog {
  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {}

  async waiting(): Promise<number> {
    const directory = this.paths.webhookInboxDir;
    try {
      const reader = new JournalReader();
      for (const name of (await namesIn(directory)).sort()) {
        if (journalOwner(name) === null) continue;
        const path = join(directory, name);
        const text = await readIfPresent(path);
        if (text !== null) reader.read(path, text);
      }
      for (const file of await legacyEventFiles(directory, namesIn)) {
        if (isDurableWriteTemporary(file.name)) continue;
        const text = await readIfPresent(file.path);
        if (text === null) continue;
        // A file that is no event is not counted: the inbox moves it aside when it next starts.
        const { event } = legacyEventOf(text);
        if (event !== null) reader.addEvent(event, false);
      }
      return reader.state().entries.length;
    } catch (error) {
      const code = errnoCode(error);
      throw new WebhookError(
        ERROR_CODES.WEBHOOK.INBOX_UNAVAILABLE,
        `Cannot read the webhook inbox ${directory}: ${describeFileSystemProblem(code)} (${code ?? 'unknown error'}); make it readable by this user.`,
        { cause: error },
      );
    }
  }
}

/** Names in `directory`; none when it does not exist (or is not a directory). */
async function namesIn(directory: string): Promise<string[]> {
  try {
    return await readdir(directory);
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

/** A file renamed away between listing and reading (a takeover, a compaction) is no longer there. */
async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
}
