/**
 * Group commit for syncs of one thing (a directory): a caller needs a sync that starts after
 * its call, since a sync already under way may have begun before its write. Callers arriving
 * while a sync runs share the one that follows it, so N concurrent writers cost two syncs, not N.
 */
export class SharedSyncs {
  private readonly underWay = new Map<string, { running: Promise<void>; next: Promise<void> | null }>();

  /** Resolves once a `sync` of `key` started after this call has finished; rejects as that one did. */
  sync(key: string, sync: () => Promise<void>): Promise<void> {
    const current = this.underWay.get(key);
    if (current === undefined) return this.start(key, sync);
    current.next ??= current.running.then(
      () => this.start(key, sync),
      () => this.start(key, sync),
    );
    return current.next;
  }

  private start(key: string, sync: () => Promise<void>): Promise<void> {
    const entry: { running: Promise<void>; next: Promise<void> | null } = { running: Promise.resolve(), next: null };
    entry.running = sync().finally(() => {
      if (this.underWay.get(key) === entry) this.underWay.delete(key);
    });
    this.underWay.set(key, entry);
    return entry.running;
  }
}
