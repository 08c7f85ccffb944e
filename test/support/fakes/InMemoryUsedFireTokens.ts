import type { UsedFireTokens } from '../../../src/application/ports/UsedFireTokens.js';

/** What several InMemoryUsedFireTokens share, as gateways share one store: id → until (ms). */
export class SharedUsedFireTokens {
  readonly until = new Map<string, number>();
}

/** UsedFireTokens in memory; instances on one SharedUsedFireTokens see each other's ids. */
export class InMemoryUsedFireTokens implements UsedFireTokens {
  constructor(private readonly shared = new SharedUsedFireTokens()) {}

  async remember(id: string, until: Date, now: Date): Promise<boolean> {
    const held = this.shared.until.get(id);
    if (held !== undefined && held > now.getTime()) return false;
    this.shared.until.set(id, until.getTime());
    return true;
  }

  async forget(id: string): Promise<void> {
    this.shared.until.delete(id);
  }

  async forgetExpired(before: Date): Promise<void> {
    for (const [id, until] of this.shared.until) if (until <= before.getTime()) this.shared.until.delete(id);
  }

  /** The ids remembered, for tests. */
  ids(): string[] {
    return [...this.shared.until.keys()];
  }
}
