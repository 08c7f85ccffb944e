import type { ChannelDirectorySnapshot, ChannelDirectoryStore } from '../../../src/application/ports/ChannelDirectory.js';

export class InMemoryChannelDirectory implements ChannelDirectoryStore {
  constructor(public snapshot: ChannelDirectorySnapshot = { updatedAt: null, platforms: {} }) {}

  async load(): Promise<ChannelDirectorySnapshot> {
    return structuredClone(this.snapshot);
  }

  async save(snapshot: ChannelDirectorySnapshot): Promise<void> {
    this.snapshot = structuredClone(snapshot);
  }
}
