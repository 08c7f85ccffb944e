/**
 * Queues of work, one per lane, each first in first out and running at most `perLane` items at
 * once; lanes never wait for one another. The webhook worker delivers answers through them, one
 * lane per platform, so that a platform that is slow, hangs or rate-limits holds up only the
 * deliveries to itself.
 */
export class DeliveryLanes<Item> {
  private readonly lanes = new Map<string, { waiting: Item[]; running: number }>();
  private readonly underWay = new Set<Promise<void>>();
  private taking = true;

  constructor(
    private readonly perLane: number,
    /** Does one item's work; it must not throw (a rejection is ignored). */
    private readonly work: (item: Item) => Promise<void>,
  ) {}

  /**
   * Queues `item` at the end of `lane`; it starts once one of the lane's places is free. After
   * `stopTaking` nothing is queued (false): the caller leaves the item for a later start.
   */
  push(lane: string, item: Item): boolean {
    if (!this.taking) return false;
    let queue = this.lanes.get(lane);
    if (!queue) {
      queue = { waiting: [], running: 0 };
      this.lanes.set(lane, queue);
    }
    queue.waiting.push(item);
    this.startWhatFits(lane);
    return true;
  }

  /** Items waiting or under way. */
  get size(): number {
    let size = 0;
    for (const queue of this.lanes.values()) size += queue.waiting.length + queue.running;
    return size;
  }

  /** Resolves once nothing is waiting or under way (or, after `stopTaking`, under way). */
  async whenIdle(): Promise<void> {
    while (this.underWay.size > 0) await Promise.all([...this.underWay]);
  }

  /** Starts nothing more: what waits is dropped and returned; what is under way goes on. */
  stopTaking(): Item[] {
    this.taking = false;
    const dropped = [...this.lanes.values()].flatMap((queue) => queue.waiting.splice(0));
    return dropped;
  }

  /** Takes items again, after `stopTaking`. */
  resumeTaking(): void {
    this.taking = true;
    for (const lane of [...this.lanes.keys()]) this.startWhatFits(lane);
  }

  private startWhatFits(lane: string): void {
    const queue = this.lanes.get(lane);
    if (!queue) return;
    while (this.taking && queue.running < this.perLane && queue.waiting.length > 0) {
      const item = queue.waiting.shift()!;
      queue.running += 1;
      const done: Promise<void> = this.work(item)
        .catch(() => undefined)
        .finally(() => {
          queue.running -= 1;
          this.underWay.delete(done);
          if (queue.running === 0 && queue.waiting.length === 0) this.lanes.delete(lane);
          else this.startWhatFits(lane);
        });
      this.underWay.add(done);
    }
  }
}
