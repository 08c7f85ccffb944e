import type { InboundCursorStore } from '../../src/application/ports/InboundChat.js';

/** Cursors kept in a Map, by platform; share one between two sources to stand for a restart. */
export class InMemoryInboundCursorStore implements InboundCursorStore {
  readonly cursors = new Map<string, string>();

  async get(platform: string): Promise<string | null> {
    return this.cursors.get(platform) ?? null;
  }

  async set(platform: string, cursor: string): Promise<void> {
    this.cursors.set(platform, cursor);
  }
}
