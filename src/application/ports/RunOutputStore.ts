/** One stored run report, as `read` returns it. */
export interface StoredRunReport {
  fileName: string;
  /** Where it can be opened, for messages (a file path for the file store). */
  location: string;
  content: string;
}

/** Keeps the Markdown file every run writes. */
export interface RunOutputStore {
  /** Writes one run's report and keeps only the newest `keep` reports of the job; returns its path. */
  save(jobId: string, fileName: string, content: string, keep: number): Promise<string>;
  /** Deletes every report of the job; nothing happens when there are none. */
  removeAll(jobId: string): Promise<void>;
  /**
   * The file names of the job's reports, newest first (names are run times, so by name);
   * empty when the job has none. Reads only: never creates anything.
   */
  list(jobId: string): Promise<string[]>;
  /** One report of the job, or null when it is not there (removed meanwhile, say). */
  read(jobId: string, fileName: string): Promise<StoredRunReport | null>;
}
