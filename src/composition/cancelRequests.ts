import type { Container } from 'inversify';
import { watchStoreFile } from '../adapters/persistence/watchStoreFile.js';
import { CancelRequestedRuns } from '../application/cron/CancelRequestedRuns.js';
import type { AgentPaths } from '../application/ports/Settings.js';
import type { DatabaseStore } from './databaseStore.js';

/**
 * Stops this process's cron runs that another process asks to cancel (`agent cron cancel`, a
 * replica's dashboard): every change to the job store (jobs.json, or the database's job
 * notifications) prompts a look (CancelRequestedRuns). Returns the unwatch.
 */
export function watchCancelRequests(container: Container, database: DatabaseStore | null, paths: AgentPaths): () => void {
  const cancels = container.get(CancelRequestedRuns);
  return watchJobStore(database, paths, () => cancels.changed());
}

/** Calls `onChange` whenever any process may have changed the jobs (jobs.json, or the database's job notifications); returns the unwatch. */
export function watchJobStore(database: DatabaseStore | null, paths: AgentPaths, onChange: () => void): () => void {
  return database ? database.watch(onChange) : watchStoreFile(paths.jobsFile, onChange);
}
