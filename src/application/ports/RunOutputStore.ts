/** Keeps the Markdown file every run writes (decisions §5). */
export interface RunOutputStore {
  /** Writes one run's report and keeps only the newest `keep` reports of the job; returns its path. */
  save(jobId: string, fileName: string, content: string, keep: number): Promise<string>;
  /** Deletes every report of the job; nothing happens when there are none. */
  removeAll(jobId: string): Promise<void>;
}
