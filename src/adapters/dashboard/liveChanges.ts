/**
 * What changed in the stores, for the dashboard's live pages (docs/dashboard.md, Live): while at
 * least one page listens, the run ledger's newest runs (and the runs a page watches, their
 * transcripts as they grow) and the jobs are looked at every POLL_MS, and at once when the job
 * store says it changed; each difference is an event naming the topics that changed (`runs`,
 * `run:<id>`, `jobs`). With no page listening nothing is looked at and no timer runs.
 *
 * Event ids are the time they were made (milliseconds since the epoch, each greater than the one
 * before), so that they still mean something to a gateway started since: a page that comes back
 * with an id this process did not make is told what the stores say changed since that time.
 */
import type { Clock } from '../../application/ports/Clock.js';
import type { RunLedger } from '../../application/ports/RunLedger.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';

/** How often the stores are looked at while a page listens: a change shows within a second. */
export const POLL_MS = 400;
/** The newest runs looked at each time. */
const NEWEST = 50;
/**
 * How far before a page's time a change still counts as missed: a run's times are stamped just
 * before its record is written, so a page made in between read the record before the change.
 */
const SLACK_MS = 5_000;
/** The events kept for pages that come back (Last-Event-ID). */
const KEPT_EVENTS = 200;

/** An event of the live stream: its id and the topics that changed. */
export interface LiveEvent {
  id: string;
  topics: string[];
}

/** What is looked at. */
export interface LiveSources {
  runs: Pick<RunLedger, 'search' | 'get' | 'transcriptOf'>;
  /** The jobs as they stand (only compared, never shown). */
  jobs(): Promise<unknown>;
  /** Calls back when the job store may have changed; returns the unwatch. Absent: polling alone. */
  watchJobs?: (onChange: () => void) => () => void;
}

/** Repeats `tick` every `ms` until the returned stop is called (a timer that keeps no process alive). */
export type Repeat = (ms: number, tick: () => void) => () => void;

export const realRepeat: Repeat = (ms, tick) => {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
};

interface Listener {
  send(event: LiveEvent): void;
  /** A run the page shows, looked at even when it is not among the newest. */
  run: string | null;
}

/** A run's state as far as a page shows it. */
function signatureOf(run: RunRecord): string {
  return [run.status, run.finished_at, run.redelivered_at ?? '', run.deliveries.length, run.answer?.length ?? -1, run.error ?? ''].join(
    '|',
  );
}

export class LiveChanges {
  private readonly listeners = new Set<Listener>();
  private readonly events: LiveEvent[] = [];
  private lastId = 0;
  private known: { runs: Map<string, string>; jobs: string } | null = null;
  private stopTimers: Array<() => void> = [];
  private looking: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly sources: LiveSources,
    private readonly clock: Clock,
    private readonly repeat: Repeat = realRepeat,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Pages listening now. */
  get listening(): number {
    return this.listeners.size;
  }

  /** Starts telling `send` of changes (the stores are watched while anyone listens); returns the stop. */
  listen(send: (event: LiveEvent) => void, run: string | null = null): () => void {
    const listener = { send, run };
    this.listeners.add(listener);
    if (this.listeners.size === 1) {
      this.known = null;
      this.stopTimers = [this.repeat(POLL_MS, () => void this.look())];
      if (this.sources.watchJobs) this.stopTimers.push(this.sources.watchJobs(() => void this.look()));
      void this.look();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      for (const stop of this.stopTimers) stop();
      this.stopTimers = [];
      this.known = null;
      // Nothing is looked at from now on: what a page saw before says nothing of what it will miss.
      this.events.length = 0;
    };
  }

  /** A new event id: the time now, in milliseconds, greater than every id made before. */
  nextId(): string {
    this.lastId = Math.max(this.clock.now().getTime(), this.lastId + 1);
    return String(this.lastId);
  }

  /** A new event of `topics` (none: one that only marks a point a page may come back from), kept for pages that come back. */
  mark(topics: string[] = []): LiveEvent {
    return this.record(topics);
  }

  /**
   * What a page that last saw event `lastId` has missed, as one event (null: nothing): the
   * topics of the events after it when this process made it while looking all along; otherwise what the stores say
   * changed since its time (runs that started, ended or were delivered again since, runs still
   * running, and the jobs), or everything when it is no time at all.
   */
  async since(lastId: string | null, run: string | null = null): Promise<LiveEvent | null> {
    if (lastId === null) return null;
    const at = this.events.findIndex((event) => event.id === lastId);
    if (at >= 0) {
      const topics = new Set(this.events.slice(at + 1).flatMap((event) => event.topics));
      return topics.size === 0 ? null : { id: this.events[this.events.length - 1]!.id, topics: [...topics] };
    }
    const since = /^\d{1,15}$/.test(lastId) ? Number(lastId) : 0;
    const after = (iso: string | null | undefined) => iso != null && Date.parse(iso) > since - SLACK_MS;
    const { runs } = await this.sources.runs.search({ limit: NEWEST });
    const watched = run !== null && !runs.some((each) => each.id === run) ? await this.sources.runs.get(run) : null;
    const changed = [...runs, ...(watched ? [watched] : [])].filter(
      (each) => each.status === 'running' || after(each.started_at) || after(each.finished_at) || after(each.redelivered_at),
    );
    const topics = ['jobs', ...(changed.length > 0 || since === 0 ? ['runs'] : []), ...changed.map((each) => `run:${each.id}`)];
    if (run !== null && since === 0) topics.push(`run:${run}`);
    return this.record([...new Set(topics)]);
  }

  /** Looks at the stores now and tells every listener what changed; one look at a time, another after it when asked meanwhile. */
  look(): Promise<void> {
    if (this.looking) {
      this.again = true;
      return this.looking;
    }
    this.looking = (async () => {
      do {
        this.again = false;
        try {
          await this.compare();
        } catch (error) {
          this.onError(error);
        }
      } while (this.again && this.listeners.size > 0);
      this.looking = null;
    })();
    return this.looking;
  }

  private async compare(): Promise<void> {
    if (this.listeners.size === 0) return;
    const { runs } = await this.sources.runs.search({ limit: NEWEST });
    const shown = new Map(runs.map((run) => [run.id, run]));
    for (const listener of this.listeners) {
      if (listener.run === null || shown.has(listener.run)) continue;
      const run = await this.sources.runs.get(listener.run);
      if (run !== null) shown.set(run.id, run);
    }
    const signatures = new Map<string, string>();
    for (const run of shown.values()) {
      const grown = run.status === 'running' ? `|${(await this.sources.runs.transcriptOf(run.id))?.length ?? 0}` : '';
      signatures.set(run.id, signatureOf(run) + grown);
    }
    const jobs = JSON.stringify(await this.sources.jobs());
    const before = this.known;
    this.known = { runs: signatures, jobs };
    if (before === null) return;
    const topics: string[] = [];
    for (const [id, signature] of signatures) if (before.runs.get(id) !== signature) topics.push(`run:${id}`);
    for (const id of before.runs.keys()) if (!signatures.has(id)) topics.push(`run:${id}`);
    if (topics.length > 0) topics.unshift('runs');
    if (jobs !== before.jobs) topics.unshift('jobs');
    if (topics.length === 0) return;
    const event = this.record(topics);
    for (const listener of this.listeners) listener.send(event);
  }

  private record(topics: string[]): LiveEvent {
    const event = { id: this.nextId(), topics };
    this.events.push(event);
    if (this.events.length > KEPT_EVENTS) this.events.splice(0, this.events.length - KEPT_EVENTS);
    return event;
  }
}
