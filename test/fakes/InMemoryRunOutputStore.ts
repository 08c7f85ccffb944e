import type { RunOutputStore } from '../../src/application/ports/RunOutputStore.js';

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

  latest(jobId: string): string | undefined {
    return this.files.get(jobId)?.at(-1)?.content;
  }
}
