import { readFile, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../application/ports/Logger.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import { ensurePrivateDirectory, isDurableWriteTemporary, namesInDirectory, syncDirectory } from './fileSystem.js';
import { eventProblem } from './webhookJournal.js';

/**
 * The webhook inbox's layout before its journals: one JSON file per accepted event, in `queued/`
 * while it waited and in `claimed/<claimant>/` (the claimant URI-encoded) once its run had
 * started. File names begin with the time of acceptance, so their order is acceptance order.
 * Nothing writes this layout any more: the inbox moves what it finds into its journal once, and
 * the backlog counts it until then.
 */

/** A file of the earlier layout (possibly the temporary file of a write cut short). */
export interface LegacyEventFile {
  name: string;
  path: string;
  /** It lies under `claimed/`: its run had started. */
  claimed: boolean;
}

/**
 * The files of the earlier layout under the inbox directory, in acceptance order, listed with
 * `list` (which decides what a missing directory means). With `readClaimsOf`, only the claims of
 * the claimants it accepts are listed.
 */
export async function legacyEventFiles(
  inboxDirectory: string,
  list: (directory: string) => Promise<string[]>,
  readClaimsOf?: (claimant: string) => boolean,
): Promise<LegacyEventFile[]> {
  const found: LegacyEventFile[] = [];
  const queued = join(inboxDirectory, 'queued');
  for (const name of await list(queued)) found.push({ name, path: join(queued, name), claimed: false });
  const claimedDir = join(inboxDirectory, 'claimed');
  for (const directory of await list(claimedDir)) {
    if (readClaimsOf !== undefined && !readClaimsOf(decodeURIComponent(directory))) continue;
    for (const name of await list(join(claimedDir, directory))) {
      found.push({ name, path: join(claimedDir, directory, name), claimed: true });
    }
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** The event a file of the earlier layout holds, or what keeps its text from being one. */
export function legacyEventOf(text: string): { event: WebhookEvent; problem: null } | { event: null; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { event: null, problem: `it is not valid JSON (${(error as Error).message})` };
  }
  const problem = eventProblem(value);
  return problem === null ? { event: value as WebhookEvent, problem: null } : { event: null, problem };
}

/**
 * Reads the earlier layout for moving it into a journal: the events waiting in `queued/` and
 * those claimed by claimants `readClaimsOf` accepts (the claims of a live process stay its own),
 * in acceptance order, with the files to remove once they are in the journal. A file that is no
 * event is moved to `damagedDir` and logged.
 */
export async function readLegacyLayout(
  inboxDirectory: string,
  damagedDir: string,
  readClaimsOf: (claimant: string) => boolean,
  log: Logger,
): Promise<{ events: Array<{ event: WebhookEvent; claimed: boolean }>; files: string[] }> {
  const events: Array<{ event: WebhookEvent; claimed: boolean }> = [];
  const files: string[] = [];
  for (const file of await legacyEventFiles(inboxDirectory, namesInDirectory, readClaimsOf)) {
    if (isDurableWriteTemporary(file.name)) {
      files.push(file.path);
      continue;
    }
    const read = legacyEventOf(await readFile(file.path, 'utf8'));
    if (read.event !== null) {
      events.push({ event: read.event, claimed: file.claimed });
      files.push(file.path);
    } else {
      await ensurePrivateDirectory(damagedDir);
      const aside = join(damagedDir, file.name);
      await rename(file.path, aside);
      log.error(`webhook inbox: ${file.path} is not an accepted event: ${read.problem}; moved it to ${aside}`, { file: aside });
    }
  }
  return { events, files };
}

/**
 * Removes the files `readLegacyLayout` read, once their content is in a journal, and then the
 * directories of the earlier layout where empty (a live process's claims stay).
 */
export async function removeLegacyLayout(inboxDirectory: string, files: string[]): Promise<void> {
  if (files.length === 0) return;
  for (const path of files) await rm(path, { force: true });
  await syncDirectory(inboxDirectory);
  const claimedDir = join(inboxDirectory, 'claimed');
  for (const claimant of await namesInDirectory(claimedDir)) await rmdir(join(claimedDir, claimant)).catch(() => undefined);
  for (const directory of [claimedDir, join(inboxDirectory, 'queued')]) await rmdir(directory).catch(() => undefined);
}
