/**
 * The webhook inbox's index of the events accepted and not done: per event a slot in a few typed
 * arrays (where its accept record lies, its route, how far its run has got) and its id in a map
 * kept in acceptance order. A backlog of a hundred thousand events costs a few MB, whatever their
 * payloads; an object per event cost about twice as much, and their number made the garbage
 * collector's young generation grow to its largest while a large journal was read.
 *
 * `Source` is what a record is read from besides the owner's own journal (null): a journal
 * taken over. Sources and routes are numbered once and shared by their events.
 */
export class PendingEvents<Source extends object> {
  /** Id → slot, in acceptance order. */
  private ids = new Map<string, number>();
  private offsets = new Float64Array(0);
  private lengths = new Uint32Array(0);
  private sourceNumbers = new Uint32Array(0);
  private routeNumbers = new Uint32Array(0);
  private states = new Uint8Array(0);
  private movedTo = new Float64Array(0);
  /** Slots freed, for reuse; then `unused` is the first slot never used. */
  private readonly freed: number[] = [];
  private unused = 0;
  /** Source number → source (0 is the own journal); numbers freed are reused. */
  private readonly sources: Array<Source | null> = [null];
  private readonly sourceNumberOf = new Map<Source, number>();
  private readonly routes: string[] = [];
  private readonly routeNumberOf = new Map<string, number>();
  /** How many events of each route (by number) are held and not claimed. */
  private readonly waitingPerRoute: number[] = [];

  get size(): number {
    return this.ids.size;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** The slot of `id`, or undefined when it is not pending. */
  slotOf(id: string): number | undefined {
    return this.ids.get(id);
  }

  /** A slot for a record of `length` bytes at `offset` in `source` (null: the own journal), of `route`; not yet an event (see `hold`). */
  allocate(source: Source | null, offset: number, length: number, route: string): number {
    const slot = this.freed.pop() ?? this.unused++;
    if (slot >= this.offsets.length) this.grow();
    this.offsets[slot] = offset;
    this.lengths[slot] = length;
    this.sourceNumbers[slot] = this.numberOfSource(source);
    this.routeNumbers[slot] = this.numberOfRoute(route);
    this.states[slot] = 0;
    this.movedTo[slot] = -1;
    return slot;
  }

  /** Makes `slot` the event `id`, after every event held so far. */
  hold(id: string, slot: number): void {
    this.ids.set(id, slot);
    this.countWaiting(slot, 1);
  }

  /**
   * Takes `ids` (slots of this index, in acceptance order) as the pending events, in place of
   * those held: a large backlog read at start is not held twice.
   */
  holdAll(ids: Map<string, number>): void {
    for (const id of [...this.ids.keys()]) this.remove(id);
    this.ids = ids;
    for (const slot of ids.values()) this.countWaiting(slot, 1);
  }

  /** Lets the event `id` go, and its slot. */
  remove(id: string): void {
    const slot = this.ids.get(id);
    if (slot === undefined) return;
    this.ids.delete(id);
    this.countWaiting(slot, -1);
    this.free(slot);
  }

  /** Whether an event held and not claimed is of a route not in `skipRoutes` (costs a look per route, not per event). */
  anyWaitingOutside(skipRoutes: ReadonlySet<string> | undefined): boolean {
    return this.waitingPerRoute.some((waiting, route) => waiting > 0 && !skipRoutes?.has(this.routes[route]!));
  }

  /** Gives back a slot no event holds (allocated for an event found done, or found twice). */
  free(slot: number): void {
    this.freed.push(slot);
  }

  /** The pending events in acceptance order: id and slot. */
  entries(): IterableIterator<[string, number]> {
    return this.ids.entries();
  }

  offset(slot: number): number {
    return this.offsets[slot]!;
  }

  length(slot: number): number {
    return this.lengths[slot]!;
  }

  source(slot: number): Source | null {
    return this.sources[this.sourceNumbers[slot]!]!;
  }

  route(slot: number): string {
    return this.routes[this.routeNumbers[slot]!]!;
  }

  claimed(slot: number): boolean {
    return (this.states[slot]! & CLAIMED) !== 0;
  }

  /** Its claim record is on disk: only its done record still needs room. */
  claimWritten(slot: number): boolean {
    return (this.states[slot]! & CLAIM_WRITTEN) !== 0;
  }

  /** Claims the held event in `slot`, or gives its claim back. */
  setClaimed(slot: number, claimed: boolean): void {
    if (this.claimed(slot) === claimed) return;
    this.countWaiting(slot, claimed ? -1 : 1);
    this.states[slot] = claimed ? this.states[slot]! | CLAIMED : this.states[slot]! & ~CLAIMED;
  }

  /** Whether the event in `slot` was accepted by this process and never handed out (see `setFresh`). */
  fresh(slot: number): boolean {
    return (this.states[slot]! & FRESH) !== 0;
  }

  /** Marks an event this process accepted; its first claim clears the mark. */
  setFresh(slot: number, fresh: boolean): void {
    this.states[slot] = fresh ? this.states[slot]! | FRESH : this.states[slot]! & ~FRESH;
  }

  setClaimWritten(slot: number): void {
    this.states[slot]! |= CLAIM_WRITTEN;
  }

  /** Where a rewrite of the own journal under way has copied the record; -1 when it has not. */
  movedOffset(slot: number): number {
    return this.movedTo[slot]!;
  }

  setMovedOffset(slot: number, offset: number): void {
    this.movedTo[slot] = offset;
  }

  /** The record now lies at `offset` (in the same source); nothing is noted as moved. */
  setOffset(slot: number, offset: number): void {
    this.offsets[slot] = offset;
    this.movedTo[slot] = -1;
  }

  /** Forgets the number of a source none of whose events is pending any more. */
  forgetSource(source: Source): void {
    const number = this.sourceNumberOf.get(source);
    if (number === undefined) return;
    this.sourceNumberOf.delete(source);
    this.sources[number] = null;
  }

  private numberOfSource(source: Source | null): number {
    if (source === null) return 0;
    let number = this.sourceNumberOf.get(source);
    if (number === undefined) {
      number = this.sources.indexOf(null, 1);
      if (number === -1) number = this.sources.push(source) - 1;
      else this.sources[number] = source;
      this.sourceNumberOf.set(source, number);
    }
    return number;
  }

  private numberOfRoute(route: string): number {
    let number = this.routeNumberOf.get(route);
    if (number === undefined) {
      number = this.routes.push(route) - 1;
      this.waitingPerRoute.push(0);
      this.routeNumberOf.set(route, number);
    }
    return number;
  }

  /** Adds `change` to the waiting events of the route of `slot` when it is not claimed. */
  private countWaiting(slot: number, change: number): void {
    if (!this.claimed(slot)) this.waitingPerRoute[this.routeNumbers[slot]!]! += change;
  }

  private grow(): void {
    const capacity = Math.max(1024, this.offsets.length * 2);
    const grown = <T extends Float64Array | Uint32Array | Uint8Array>(old: T, make: (length: number) => T): T => {
      const bigger = make(capacity);
      bigger.set(old);
      return bigger;
    };
    this.offsets = grown(this.offsets, (length) => new Float64Array(length));
    this.lengths = grown(this.lengths, (length) => new Uint32Array(length));
    this.sourceNumbers = grown(this.sourceNumbers, (length) => new Uint32Array(length));
    this.routeNumbers = grown(this.routeNumbers, (length) => new Uint32Array(length));
    this.states = grown(this.states, (length) => new Uint8Array(length));
    this.movedTo = grown(this.movedTo, (length) => new Float64Array(length));
  }
}

const CLAIMED = 1;
const CLAIM_WRITTEN = 2;
/** Accepted by this process and never handed out before: no run of it can have started anywhere. */
const FRESH = 4;
