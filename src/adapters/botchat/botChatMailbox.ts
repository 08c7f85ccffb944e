import { link, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BOT_CHAT_STATUSES, type BotChatStatus } from '../../domain/botChat.js';
import { ensurePrivateDirectory, errnoCode, PRIVATE_FILE_MODE, writeFileDurably } from '../persistence/fileSystem.js';
import { exists as processExists, readProcEntry } from '../process/processTable.js';

/** How long an owner's lease lasts; it is renewed every 10 s. */
export const OWNER_LEASE_MS = 30_000;
export const OWNER_RENEW_MS = 10_000;

/** One record of a mailbox, `<receipt>.json`. */
export interface MailboxRecord {
  receipt: string;
  status: BotChatStatus;
  /** Who took it: the live owner's chat, or the command-line lane. */
  lane: 'owner' | 'command-line';
  job_id: string;
  job_name: string;
  execution_id: string;
  source_home: string;
  target_home: string;
  message: string;
  created_at: string;
  updated_at: string;
  error: string | null;
}

/** `owner.json`: the interactive chat that holds the mailbox. */
export interface OwnerRecord {
  pid: number;
  lease_expires_at: string;
}

export function mailboxOf(home: string): string {
  return join(home, 'runtime', 'bot_chat');
}

export function recordPath(mailbox: string, receipt: string): string {
  return join(mailbox, `${receipt}.json`);
}

export const OWNER_FILE = 'owner.json';

export async function ensureMailbox(mailbox: string): Promise<void> {
  await ensurePrivateDirectory(mailbox);
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Creates `<receipt>.json` whole, or not at all when it already exists (false): the text is
 * written to a private temporary file first and then linked to its name, which fails on an
 * existing name, so no reader ever sees half a record and no receipt is written twice.
 */
export async function createRecordOnce(mailbox: string, record: MailboxRecord): Promise<boolean> {
  const temporary = join(mailbox, `.${record.receipt}.${process.pid}.new.tmp`);
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: PRIVATE_FILE_MODE, flag: 'w' });
  try {
    await link(temporary, recordPath(mailbox, record.receipt));
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

export async function rewriteRecord(mailbox: string, record: MailboxRecord): Promise<void> {
  await writeFileDurably(recordPath(mailbox, record.receipt), `${JSON.stringify(record, null, 2)}\n`);
}

export type ReadRecord = { ok: true; record: MailboxRecord } | { ok: false; file: string };

/** The records of a mailbox (`*.json` but owner.json), oldest first; unreadable ones as such. */
export async function readRecords(mailbox: string): Promise<ReadRecord[]> {
  let names: string[];
  try {
    names = await readdir(mailbox);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
  const records: ReadRecord[] = [];
  for (const name of names.filter((candidate) => candidate.endsWith('.json') && candidate !== OWNER_FILE && !candidate.startsWith('.'))) {
    const file = join(mailbox, name);
    const record = parseRecord(await readFile(file, 'utf8').catch(() => ''));
    records.push(record ? { ok: true, record } : { ok: false, file });
  }
  return records.sort((a, b) => (a.ok && b.ok ? a.record.created_at.localeCompare(b.record.created_at) : 0));
}

function parseRecord(text: string): MailboxRecord | null {
  try {
    const value = JSON.parse(text) as Partial<MailboxRecord> | null;
    if (typeof value !== 'object' || value === null) return null;
    if (typeof value.receipt !== 'string' || !(BOT_CHAT_STATUSES as readonly string[]).includes(value.status as string)) return null;
    if (typeof value.message !== 'string') return null;
    return value as MailboxRecord;
  } catch {
    return null;
  }
}

/** The owner of a mailbox when it is live: its pid runs and its lease has not expired. */
export async function liveOwner(mailbox: string, now: number): Promise<OwnerRecord | null> {
  let owner: Partial<OwnerRecord>;
  try {
    owner = JSON.parse(await readFile(join(mailbox, OWNER_FILE), 'utf8')) as Partial<OwnerRecord>;
  } catch {
    return null;
  }
  if (typeof owner.pid !== 'number' || typeof owner.lease_expires_at !== 'string') return null;
  if (!(Date.parse(owner.lease_expires_at) > now)) return null;
  return isRunning(owner.pid) ? (owner as OwnerRecord) : null;
}

/** Exists and has not exited (a zombie that still holds its pid has). */
function isRunning(pid: number): boolean {
  const state = processExists(pid) ? (readProcEntry(pid)?.state ?? '?') : null;
  return state !== null && state !== 'Z' && state !== 'X';
}

export async function writeOwner(mailbox: string, owner: OwnerRecord): Promise<void> {
  await writeFileDurably(join(mailbox, OWNER_FILE), `${JSON.stringify(owner)}\n`);
}

export async function removeOwner(mailbox: string, pid: number): Promise<void> {
  try {
    const owner = JSON.parse(await readFile(join(mailbox, OWNER_FILE), 'utf8')) as Partial<OwnerRecord>;
    if (owner.pid === pid) await rm(join(mailbox, OWNER_FILE), { force: true });
  } catch {
    // Nothing to give up.
  }
}
