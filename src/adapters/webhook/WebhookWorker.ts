import { inject, injectable, optional } from 'inversify';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { WebhookWorkerSettings } from '../../application/ports/Settings.js';
import type { Timer } from '../../application/ports/Timer.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { WebhookInbox } from '../../application/ports/WebhookInbox.js';
import { WebhookEventExecution, type PendingWebhookDelivery } from '../../application/webhook/WebhookEventExecution.js';
import { errorText } from '../../domain/errors.js';
import { DeliveryLanes } from '../../application/delivery/DeliveryLanes.js';

/** The worker's deliveries among the others in the gateway's lanes. */
const LANE_GROUP = 'webhook';

/** How long aborted runs get to wind down before stop() returns without them. */
const ABORT_WAIT_MS = 5000;
/** The first and the longest wait between tries to complete an event the inbox could not complete. */
const COMPLETE_RETRY_FIRST_MS = 1000;
const COMPLETE_RETRY_MAX_MS = 5_000;

/**
 * The gateway's webhook worker: takes accepted events from the inbox in order and
 * runs them, at most `max_concurrent_runs` at a time. A free run slot goes first to the oldest
 * event of a route with no run in progress, and only when there is none to the oldest event of
 * any route, so that a route with a deep backlog cannot keep the others waiting.
 *
 * A run holds its slot until its answer is recorded; the delivery then waits in its platform's
 * lane (DeliveryLanes: first in first out, `max_concurrent_deliveries` at once per platform,
 * the lanes cron runs deliver through too), so a platform that is slow, hangs or rate-limits delays only the deliveries to itself. The
 * event is completed once its delivery ended. `start()` first gives back the events a
 * crashed process left claimed, then drains the inbox and keeps looking: at every `notify()`
 * (the accept path calls it after each accept) and every `pollIntervalMs`, when it also takes
 * over the events of gateways on this home that died meanwhile. Each event's run is the
 * `WebhookEventExecution` use case; this long-lived component decides only when runs start.
 *
 * Every finished event is completed, whatever its outcome, so a failing event is never retried
 * forever. Only a run cut short by `stop()` stays claimed: the next start runs it again.
 *
 * An inbox that cannot be reached (a database restarting) is a fault to wait out, not a reason to
 * run anything twice: claiming is logged as failing once, and once more when it works again; an
 * event that finished but could not be completed keeps its slot and is completed again with
 * backoff (1 s doubling to 5 s) until the inbox takes it, or the worker stops.
 *
 * All its waiting (the polls, the grace periods of `stop()`) goes through the `Timer`, so tests
 * move its time on by hand.
 */
@injectable()
export class WebhookWorker {
  private state: 'idle' | 'running' | 'stopping' = 'idle';
  private readonly inProgress = new Map<string, { done: Promise<void>; abort: AbortController }>();
  /** How many of the runs in progress each route has (the routes busy when a slot frees). */
  private readonly runsPerRoute = new Map<string, number>();
  private readonly deliveries: DeliveryLanes;
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  /** Ends the polling started by `start()`. */
  private polling: AbortController | null = null;
  /** Aborted when the worker gives up waiting (the end of `stop()`): ends the retries of `complete`. */
  private retrying = new AbortController();
  /** Whether the last claim failed (the failure is logged once, and its end once). */
  private claimFailing = false;
  /** Whether the last takeover failed (logged once until one works). */
  private takeOverFailing = false;

  constructor(
    @inject(TOKENS.WebhookInbox) private readonly inbox: WebhookInbox,
    @inject(WebhookEventExecution) private readonly execution: WebhookEventExecution,
    @inject(TOKENS.WebhookWorkerSettings) private readonly settings: WebhookWorkerSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    /** The gateway's lanes, shared with cron runs; lanes of its own when built by hand. */
    @inject(TOKENS.DeliveryLanes) @optional() lanes: DeliveryLanes | null = null,
  ) {
    this.deliveries = lanes ?? new DeliveryLanes(settings.maxConcurrentDeliveries);
  }

  /**
   * Recovers abandoned claims, starts claiming and polling; resolves once the first claims are
   * under way, with how many events were recovered. Throws when the inbox cannot be read at all.
   */
  async start(): Promise<number> {
    if (this.state !== 'idle') return 0;
    const recovered = await this.inbox.recover();
    if (recovered > 0) this.log.warn(`${recovered} webhook event(s) left unfinished by a stopped process will run again`);
    this.state = 'running';
    this.retrying = new AbortController();
    this.deliveries.resumeTaking(LANE_GROUP);
    this.poll();
    await this.notify();
    return recovered;
  }

  /** Every `pollIntervalMs` until `stop()`: takes over from dead gateways and claims. */
  private poll(): void {
    const polling = new AbortController();
    this.polling = polling;
    void (async () => {
      for (;;) {
        // In the background: a gateway that failed to start must not be kept alive by its polls.
        await this.timer.wait(this.settings.pollIntervalMs, polling.signal, { background: true });
        if (polling.signal.aborted) return;
        void this.takeOverFromDead();
        void this.notify();
      }
    })();
  }

  /**
   * Takes over what gateways that died since the start left in the inbox (another gateway on
   * this home may die at any time, not only before this one starts). Never throws.
   */
  private async takeOverFromDead(): Promise<void> {
    try {
      const recovered = await this.inbox.recover();
      if (recovered > 0) this.log.warn(`${recovered} webhook event(s) left unfinished by a stopped process will run again`);
      this.takeOverFailing = false;
    } catch (error) {
      if (!this.takeOverFailing)
        this.log.error(`cannot take over webhook events of stopped processes; trying again at the next poll: ${errorText(error)}`);
      this.takeOverFailing = true;
    }
  }

  /** Claims as many waiting events as there are free slots. Safe to call any time; never throws. */
  notify(): Promise<void> {
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = this.claimWhileFree().finally(() => {
      this.claiming = null;
    });
    return this.claiming;
  }

  /** Resolves once no event is running or being delivered and nothing more could be claimed (for tests and shutdown). */
  async whenIdle(): Promise<void> {
    while (this.claiming || this.inProgress.size > 0 || this.deliveries.size(LANE_GROUP) > 0) {
      await Promise.all([this.claiming, ...[...this.inProgress.values()].map((run) => run.done), this.deliveries.whenIdle(LANE_GROUP)]);
    }
  }

  /**
   * Stops claiming and lets the runs and deliveries in progress finish for up to `graceMs`; runs
   * still going then are aborted and stay claimed for the next start, and get `abortWaitMs` more
   * to wind down (a run that ignores the abort is left behind). Deliveries not started by then
   * are left too: the next start delivers their recorded answers without running the agent.
   * Resolves true when all finished in time.
   */
  async stop(graceMs: number, abortWaitMs = ABORT_WAIT_MS): Promise<boolean> {
    if (this.state === 'idle') return true;
    this.state = 'stopping';
    this.polling?.abort();
    this.polling = null;
    const finished = await this.idleWithin(graceMs);
    if (!finished) {
      const left = this.deliveries.stopTaking(LANE_GROUP);
      if (left.length > 0)
        this.log.warn(`${left.length} webhook answer(s) still waiting for delivery will be delivered after the next start`);
      for (const run of this.inProgress.values()) run.abort.abort();
      this.retrying.abort();
      await this.idleWithin(abortWaitMs);
    }
    this.state = 'idle';
    return finished;
  }

  /** Whether every run ended within `ms`. */
  private async idleWithin(ms: number): Promise<boolean> {
    const wait = new AbortController();
    const late = this.timer.wait(ms, wait.signal).then(() => false);
    const idle = await Promise.race([this.whenIdle().then(() => true), late]);
    wait.abort();
    return idle;
  }

  private async claimWhileFree(): Promise<void> {
    do {
      this.claimAgain = false;
      while (this.state === 'running' && this.inProgress.size < this.settings.maxConcurrentRuns) {
        let event: WebhookEvent | null;
        try {
          const busy = new Set(this.runsPerRoute.keys());
          event = (await this.inbox.claimNext(busy)) ?? (busy.size > 0 ? await this.inbox.claimNext() : null);
        } catch (error) {
          if (!this.claimFailing)
            this.log.error(`cannot take webhook events from the inbox; trying again at the next poll: ${errorText(error)}`);
          this.claimFailing = true;
          return;
        }
        if (this.claimFailing) this.log.info('webhook events are taken from the inbox again');
        this.claimFailing = false;
        if (event === null) break;
        this.launch(event);
      }
    } while (this.claimAgain && this.state === 'running');
  }

  private launch(event: WebhookEvent): void {
    const abort = new AbortController();
    this.runsPerRoute.set(event.route, (this.runsPerRoute.get(event.route) ?? 0) + 1);
    const done = this.runAndComplete(event, abort.signal).finally(() => {
      this.inProgress.delete(event.id);
      const left = (this.runsPerRoute.get(event.route) ?? 1) - 1;
      if (left > 0) this.runsPerRoute.set(event.route, left);
      else this.runsPerRoute.delete(event.route);
      if (this.state === 'running') void this.notify();
    });
    this.inProgress.set(event.id, { done, abort });
  }

  /** The agent's part in the run slot; an answer goes on to its platform's lane, freeing the slot. */
  private async runAndComplete(event: WebhookEvent, signal: AbortSignal): Promise<void> {
    const { report, pending } = await this.execution.answer(event, signal);
    if (pending) {
      // Stopping: the answer is recorded, the event stays claimed, and the next start delivers it.
      this.deliveries.push(pending.lane, { group: LANE_GROUP, deliver: () => this.deliverAndComplete(pending) });
      return;
    }
    if (report.status === 'abandoned') return;
    await this.complete(event.id);
  }

  private async deliverAndComplete(pending: PendingWebhookDelivery): Promise<void> {
    await this.execution.deliverAnswer(pending);
    await this.complete(pending.event.id);
  }

  private async complete(eventId: string): Promise<void> {
    for (let waitMs = COMPLETE_RETRY_FIRST_MS; ; waitMs = Math.min(waitMs * 2, COMPLETE_RETRY_MAX_MS)) {
      try {
        await this.inbox.complete(eventId);
        if (waitMs > COMPLETE_RETRY_FIRST_MS) this.log.info(`webhook event ${eventId} is completed in the inbox now`);
        return;
      } catch (error) {
        if (waitMs === COMPLETE_RETRY_FIRST_MS) {
          this.log.error(
            `webhook event ${eventId} finished but could not be completed in the inbox; trying again until it can: ${errorText(error)}`,
          );
        }
      }
      // Stopped: the event stays claimed, and whoever takes it over finds its run record ended.
      if (this.state === 'idle') return;
      const stopping = this.retrying.signal;
      await this.timer.wait(waitMs, stopping, { background: true });
      if (stopping.aborted) return;
    }
  }
}
