/** One delivery waiting in a lane: whose it is (`cron`, `webhook`) and the work itself. */
export interface LaneWork {
  /** Who queued it: each group is stopped, counted and waited for on its own. */
  group: string;
  /** Does the delivery; it must not throw (a rejection is ignored). */
  deliver(): Promise<void>;
}

/**
 * The gateway's delivery lanes (docs/delivery.md): queues of deliveries, one per lane (one per
 * chat platform, `platform:telegram`; one for the code host's comments, one for the log), each
 * first in first out and running at most `perLane` deliveries at once; lanes never wait for one
 * another. Cron runs and webhook runs queue their answers here once recorded, so that a platform
 * that is slow, hangs or rate-limits holds up only the deliveries to itself, and never a run slot.
 *
 * One instance is shared by everything in the gateway that delivers; each group (the cron
 * deliveries, the webhook worker's) is counted, waited for and stopped on its own.
 */
export class DeliveryLanes {
  private readonly lanes = new Map<string, { waiting: LaneWork[]; running: number }>();
  private readonly underWay = new Map<Promise<void>, string>();
  private readonly stopped = new Set<string>();

  constructor(private readonly perLane: number) {}

  /**
   * Queues `work` at the end of `lane`; it starts once one of the lane's places is free. After
   * `stopTaking(work.group)` nothing of that group is queued (false): the caller leaves the
   * delivery for a later start.
   */
  push(lane: string, work: LaneWork): boolean {
    if (this.stopped.has(work.group)) return false;
    let queue = this.lanes.get(lane);
    if (!queue) {
      queue = { waiting: [], running: 0 };
      this.lanes.set(lane, queue);
    }
    queue.waiting.push(work);
    this.startWhatFits(lane);
    return true;
  }

  /** Deliveries of `group` waiting or under way (of every group when absent). */
  size(group?: string): number {
    let size = 0;
    for (const queue of this.lanes.values()) size += queue.waiting.filter((work) => group === undefined || work.group === group).length;
    for (const owner of this.underWay.values()) if (group === undefined || owner === group) size += 1;
    return size;
  }

  /** Resolves once no delivery of `group` (of any, when absent) is waiting or under way (after `stopTaking`, under way). */
  async whenIdle(group?: string): Promise<void> {
    // What waits starts only as something under way in its lane ends, whoever's it is.
    while (this.size(group) > 0) await Promise.race([...this.underWay.keys()]);
  }

  /** Starts nothing more of `group`: what of it waits is dropped and returned; what is under way goes on. */
  stopTaking(group: string): LaneWork[] {
    this.stopped.add(group);
    const dropped: LaneWork[] = [];
    for (const [lane, queue] of this.lanes) {
      const kept = queue.waiting.filter((work) => work.group !== group);
      dropped.push(...queue.waiting.filter((work) => work.group === group));
      queue.waiting = kept;
      if (queue.running === 0 && queue.waiting.length === 0) this.lanes.delete(lane);
    }
    return dropped;
  }

  /** Takes deliveries of `group` again, after `stopTaking`. */
  resumeTaking(group: string): void {
    this.stopped.delete(group);
    for (const lane of [...this.lanes.keys()]) this.startWhatFits(lane);
  }

  private startWhatFits(lane: string): void {
    const queue = this.lanes.get(lane);
    if (!queue) return;
    while (queue.running < this.perLane && queue.waiting.length > 0) {
      const work = queue.waiting.shift()!;
      queue.running += 1;
      let delivering: Promise<void>;
      try {
        delivering = work.deliver();
      } catch {
        delivering = Promise.resolve();
      }
      const done: Promise<void> = delivering
        .catch(() => undefined)
        .finally(() => {
          queue.running -= 1;
          this.underWay.delete(done);
          if (queue.running === 0 && queue.waiting.length === 0) this.lanes.delete(lane);
          else this.startWhatFits(lane);
        });
      this.underWay.set(done, work.group);
    }
  }
}
