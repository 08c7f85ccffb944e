import type { RunOutputStore, StoredRunReport } from '../../../src/application/ports/RunOutputStore.js';

/** Run reports in memory, keyed by job id, oldest first. */
export class InMemoryRunOutputStore implements RunOutputStore {
  readonly files = new Map<string, Array<{ name: string; content: string }>>();

  async save(jobId: string, fileName: string, content: string, keep: number): Promise<string> {
    const list = (this.files.get(jobId) ?? []).filter((file) => file.name !== fileName);
    list.push({ name: fileName, content });
    list.sort((a, b) => a.name.localeCompare(b.name));
    this.files.set(jobId, list.slice(-keep));
    return `memory://${jobId}/${fileName}`;
  }

  async removeAll(jobId: string): Promise<void> {
    this.files.delete(jobId);
  }

  async list(jobId: string): Promise<string[]> {
    return (this.files.get(jobId) ?? []).map((file) => file.name).reverse();
  }

  async read(jobId: string, fileName: string): Promise<StoredRunReport | null> {
    const file = this.files.get(jobId)?.find((each) => each.name === fileName);
    return file ? { fileName, location: `memory://${jobId}/${fileName}`, content: file.content } : null;
  }

  latest(jobId: string): string | undefined {
    return this.files.get(jobId)?.at(-1)?.content;
  }
}
