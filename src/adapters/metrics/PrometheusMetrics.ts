import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DeliveryOutcome, EventOutOutcome, Metrics, RunKind } from '../../application/ports/Metrics.js';
import type { TokenCounts } from '../../domain/runs/usage.js';
import type { MetricsExposition } from '../http/metricsRoute.js';
import { EventLoopDelay } from './EventLoopDelay.js';

/** Run durations: from a quick script-only run to an hour-long agent session. */
const RUN_DURATION_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
/** Firing lateness: on time is well under a second; minutes mean the gateway was not running. */
const LATENESS_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/**
 * The Metrics port over prom-client, with its own registry (nothing global), rendered in the
 * Prometheus text format for `GET /metrics`. Besides what the use cases record, it has the
 * webhook inbox backlog, read at each scrape, the event loop's delay over the last minute (once
 * {@link startEventLoopMonitor} is called), and Node's process metrics (`process_*`, `nodejs_*`).
 *
 * Loaded only by the gateway with `platforms.webhook.extra.metrics: true`.
 */
export class PrometheusMetrics implements Metrics, MetricsExposition {
  private readonly registry = new Registry();
  private readonly runs: Counter<'kind' | 'outcome'>;
  private readonly runDuration: Histogram<'kind'>;
  private readonly lateness: Histogram;
  private readonly requests: Counter<'status'>;
  private readonly deliveries: Counter<'platform' | 'outcome'>;
  private readonly receivers: Gauge<'platform'>;
  private readonly tokens: Counter<'provider' | 'model' | 'kind'>;
  private readonly cost: Counter<'provider' | 'model'>;
  private readonly eventsOut: Counter<'subscription' | 'outcome'>;
  /** Counts the events out given up on; null while the gateway sends none. */
  private readFailedEvents: (() => Promise<number>) | null = null;
  /** Reads the inbox backlog; null while no webhook inbox is open (webhooks off). */
  private readBacklog: (() => Promise<number>) | null = null;
  /** Held here for as long as the gateway runs: an unreferenced histogram would stop being sampled. */
  private readonly eventLoop: EventLoopDelay;

  constructor(eventLoop: EventLoopDelay = new EventLoopDelay()) {
    this.eventLoop = eventLoop;
    const registers = [this.registry];
    this.runs = new Counter({
      name: 'agent_runs_total',
      help: "Runs ended, by run path (cron, webhook) and outcome (a cron job's last_status, a webhook run's outcome).",
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.runDuration = new Histogram({
      name: 'agent_run_duration_seconds',
      help: 'How long runs took, from start to recorded outcome, by run path.',
      labelNames: ['kind'],
      buckets: RUN_DURATION_BUCKETS,
      registers,
    });
    this.lateness = new Histogram({
      name: 'agent_cron_firing_lateness_seconds',
      help: 'How long after its scheduled time each cron run started.',
      buckets: LATENESS_BUCKETS,
      registers,
    });
    this.requests = new Counter({
      name: 'agent_webhook_requests_total',
      help: 'Requests to webhook routes, by the HTTP status answered.',
      labelNames: ['status'],
      registers,
    });
    this.deliveries = new Counter({
      name: 'agent_deliveries_total',
      help: 'Deliveries to chat platforms, by platform and outcome (delivered, failed).',
      labelNames: ['platform', 'outcome'],
      registers,
    });
    this.receivers = new Gauge({
      name: 'agent_chat_receiver_up',
      help: 'Whether this gateway receives messages from the chat platform (1) or not (0: down, starting, or standing by while another gateway holds the receiving role).',
      labelNames: ['platform'],
      registers,
    });
    this.tokens = new Counter({
      name: 'agent_model_tokens_total',
      help: 'Tokens of model turns as the providers reported them, by provider, model and kind (input, cached included; output; cached_input).',
      labelNames: ['provider', 'model', 'kind'],
      registers,
    });
    this.cost = new Counter({
      name: 'agent_cost_usd_total',
      help: 'What model turns cost in US dollars at the configured prices (models.prices), by provider and model; unpriced models are not counted.',
      labelNames: ['provider', 'model'],
      registers,
    });
    this.eventsOut = new Counter({
      name: 'agent_events_out_total',
      help: 'Attempts to send an event out (events_out), by subscription and outcome (sent, retried, undeliverable).',
      labelNames: ['subscription', 'outcome'],
      registers,
    });
    const failedEvents = () => this.readFailedEvents;
    new Gauge({
      name: 'agent_events_out_undeliverable',
      help: 'Events out given up on and kept in the store ("agent events failed" lists them).',
      registers,
      async collect() {
        const read = failedEvents();
        if (read === null) return;
        try {
          this.set(await read());
        } catch {
          // A store that cannot be read leaves the last value: the scrape still answers.
        }
      },
    });
    // prom-client calls collect with the gauge as `this`; the backlog reader is this object's.
    const backlog = () => this.readBacklog;
    new Gauge({
      name: 'agent_webhook_inbox_backlog',
      help: 'Webhook events accepted and not yet done (running ones included).',
      registers,
      async collect() {
        const read = backlog();
        if (read === null) return;
        try {
          this.set(await read());
        } catch {
          // An inbox that cannot be read leaves the last value: the scrape still answers.
        }
      },
    });
    new Gauge({
      name: 'agent_event_loop_delay_seconds',
      help: 'How late the event loop ran a 20 ms timer over the last 30 to 60 seconds, by quantile (0.5, 0.99; 1 is the maximum).',
      labelNames: ['quantile'],
      registers,
      collect() {
        const delay = eventLoop.read();
        if (delay === null) return;
        this.set({ quantile: '0.5' }, delay.p50);
        this.set({ quantile: '0.99' }, delay.p99);
        this.set({ quantile: '1' }, delay.max);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Starts sampling the event loop's delay (when the gateway starts). */
  startEventLoopMonitor(): void {
    this.eventLoop.start();
  }

  /** Stops sampling it (when the gateway stops). */
  stopEventLoopMonitor(): void {
    this.eventLoop.stop();
  }

  /** Where the inbox backlog is read from, once the webhook inbox is open. */
  watchInboxBacklog(read: () => Promise<number>): void {
    this.readBacklog = read;
  }

  /** Where the count of undeliverable events out is read from, once the gateway sends them. */
  watchFailedEvents(read: () => Promise<number>): void {
    this.readFailedEvents = read;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  runFinished(kind: RunKind, outcome: string, durationSeconds: number): void {
    this.runs.inc({ kind, outcome });
    this.runDuration.observe({ kind }, Math.max(0, durationSeconds));
  }

  runStarted(lateSeconds: number): void {
    this.lateness.observe(Math.max(0, lateSeconds));
  }

  webhookRequest(status: number): void {
    this.requests.inc({ status: String(status) });
  }

  deliveryFinished(platform: string, outcome: DeliveryOutcome): void {
    this.deliveries.inc({ platform, outcome });
  }

  chatReceiverUp(platform: string, up: boolean): void {
    this.receivers.set({ platform }, up ? 1 : 0);
  }

  modelUsage(provider: string, model: string, counts: TokenCounts, costUsd: number | null): void {
    this.tokens.inc({ provider, model, kind: 'input' }, counts.input_tokens);
    this.tokens.inc({ provider, model, kind: 'output' }, counts.output_tokens);
    this.tokens.inc({ provider, model, kind: 'cached_input' }, counts.cached_input_tokens);
    if (costUsd !== null) this.cost.inc({ provider, model }, costUsd);
  }

  eventOut(subscription: string, outcome: EventOutOutcome): void {
    this.eventsOut.inc({ subscription, outcome });
  }
}
