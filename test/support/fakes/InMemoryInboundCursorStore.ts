import type { InboundCursorStore } from '../../../src/application/ports/InboundChat.js';

/** Cursors in a Map, by platform (share one between two sources to stand for a restart); `writes` counts the `set` calls. */
export class InMemoryInboundCursorStore implements InboundCursorStore {
  readonly cursors = new Map<string, string>();
  writes = 0;

  async get(platform: string): Promise<string | null> {
    return this.cursors.get(platform) ?? null;
  }

  async set(platform: string, cursor: string): Promise<void> {
    this.writes += 1;
    this.cursors.set(platform, cursor);
  }
}
