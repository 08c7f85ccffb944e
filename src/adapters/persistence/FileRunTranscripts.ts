/**
 * The run ledger's transcripts in files (docs/runs.md, Transcripts): one file per run,
 * `runs/<kind>/<job id or route>/.transcripts/<id>.json`, apart from the records so that listing
 * runs never reads them; the directory's name is never a record's. Written atomically without
 * waiting for the disk, like the records; directory 0700, files 0600. The save of a record that
 * removes others under the retention removes their transcripts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { InvalidInputError } from '../../domain/errors.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import { FileStoreError } from './FileStoreError.js';
import { ensurePrivateDirectory, errnoCode, fileStoreError, isPlainPathSegment, removeFile, writeFileAtomically } from './fileSystem.js';

const TRANSCRIPTS = '.transcripts';

const pathOf = (runs: string, id: string) => join(runs, TRANSCRIPTS, `${id}.json`);

/** Writes the transcript of run `id` into `runs`, the directory of its job's or route's records. */
export async function writeTranscript(runs: string, id: string, transcript: RunTranscript): Promise<void> {
  if (!isPlainPathSegment(id)) throw new InvalidInputError(ERROR_CODES.RUNS.INVALID_NAME, `The run id "${id}" cannot name a file.`);
  const path = pathOf(runs, id);
  const text = `${JSON.stringify(transcript)}\n`;
  try {
    await writeFileAtomically(path, text).catch(async (error: unknown) => {
      if (errnoCode(error) !== 'ENOENT') throw error;
      await ensurePrivateDirectory(join(runs, TRANSCRIPTS));
      await writeFileAtomically(path, text);
    });
  } catch (error) {
    throw new FileStoreError(
      ERROR_CODES.RUNS.UNAVAILABLE,
      `${fileStoreError('write', `the run ledger in ${join(runs, TRANSCRIPTS)}`, error)}; make it a directory this user can write to.`,
      { cause: error },
    );
  }
}

/** The transcript of run `id` in `runs`; null when there is none, or half a file a crash left. */
export async function readTranscript(runs: string, id: string): Promise<RunTranscript | null> {
  const path = pathOf(runs, id);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (['ENOENT', 'ENOTDIR', 'EISDIR'].includes(errnoCode(error) ?? '')) return null;
    throw new FileStoreError(
      ERROR_CODES.RUNS.UNREADABLE,
      `${fileStoreError('read', `the run ledger in ${path}`, error)}; give this user read access to it.`,
      { cause: error },
    );
  }
  try {
    const transcript: unknown = JSON.parse(text);
    return Array.isArray(transcript) ? (transcript as RunTranscript) : null;
  } catch {
    return null;
  }
}

/** Removes the transcripts of the runs `ids` of `runs`, those that have one. */
export async function removeTranscripts(runs: string, ids: readonly string[]): Promise<void> {
  await Promise.all(ids.map((id) => removeFile(pathOf(runs, id))));
}
