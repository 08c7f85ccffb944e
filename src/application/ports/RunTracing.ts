/**
 * What a trace starts with: its root span, one per run (docs/traces.md). A cron run names its job
 * and slot, a webhook run its route and event, with the traceparent of each request that
 * accepted one of its events (the run's links); a chat turn its conversation; a webhook request
 * its route.
 */
export type TracedRoot =
  | { kind: 'cron_run'; jobId: string; jobName: string; runId: string; slot: string | null; attempt?: number }
  | {
      kind: 'webhook_run';
      route: string;
      event: string;
      deliveryId: string;
      eventId: string;
      /** The W3C traceparents of the requests that accepted the run's events, linked from its root span. */
      links: readonly string[];
      attempt?: number;
    }
  | { kind: 'chat_turn'; platform: string; conversation: string }
  | { kind: 'webhook_request'; route: string };

/** A step of the run under way, a span of its own. */
export type TracedStep =
  /** One call of a model: `api` is the wire it speaks (`openai`, `anthropic`), `provider` its name in the configuration. */
  | { kind: 'model_call'; api: string; provider: string; model: string; endpoint?: string | null }
  | { kind: 'tool_call'; tool: string; callId: string }
  /** One delivery of an answer to one target (`telegram:-100123`, `the log`); `platform` for a chat platform. */
  | { kind: 'delivery'; target: string; platform: string | null };

/** What a span found out on its way, noted on it; every field optional. */
export interface SpanNotes {
  /** A model call's tokens. */
  usage?: { inputTokens: number; outputTokens: number; cachedInputTokens?: number } | null;
  /** How it ended in the project's own words: a run's status, a delivery's `delivered` / `failed`, a request's outcome. */
  outcome?: string;
  /** A delivery's message ids (one per part), a bot-chat receipt. */
  messageIds?: readonly string[];
  /** Why it failed without throwing (a failed delivery, a tool's error result, a failed run): the span is marked an error. */
  error?: string | null;
  /** A webhook request's answer. */
  httpStatus?: number;
  /** A webhook request's event, as accepted. */
  webhook?: { event: string; deliveryId: string; eventId?: string };
}

/** Where a span under way takes notes. */
export interface SpanNoter {
  note(notes: SpanNotes): void;
}

/** A trace started: its root span, which ends when `end` is called. */
export interface TraceHandle extends SpanNoter {
  /** The trace's id, 32 lower-case hex digits; null with tracing off, or when the sampler left the trace out. */
  readonly traceId: string | null;
  /** The root span as a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`), to be stored and linked later; null with tracing off. */
  readonly traceparent: string | null;
  /** Runs `work` with the root span current: the steps it starts are its children, its log lines carry the trace id. */
  within<T>(work: () => Promise<T>): Promise<T>;
  /** Ends the root span, with `notes` last. A second call does nothing. */
  end(notes?: SpanNotes): void;
}

/**
 * Traces of runs, exported to an OpenTelemetry backend (docs/traces.md). Cheap and never
 * throwing, so that it can sit on every run path; without tracing configured the use cases get
 * NO_TRACING, which records nothing and loads nothing.
 */
export interface RunTracing {
  /** Starts a new trace (never a child of the span current now). */
  start(root: TracedRoot): TraceHandle;
  /**
   * Runs `work` in a span of its own, a child of the span current now (a run's root, or a step);
   * without one, a trace of its own. The span ends when `work` settles; a throw marks it failed
   * and is thrown on.
   */
  step<T>(step: TracedStep, work: (span: SpanNoter) => Promise<T>): Promise<T>;
  /** The trace id of the span current now, null when there is none (or its trace is not sampled). */
  currentTraceId(): string | null;
  /** Exports every span ended so far and waits for it. Each process calls it before it exits. Never throws. */
  flush(): Promise<void>;
}

const NO_NOTES: SpanNoter = { note: () => undefined };

/** A trace that records nothing. */
export const NO_TRACE: TraceHandle = {
  traceId: null,
  traceparent: null,
  note: () => undefined,
  within: (work) => work(),
  end: () => undefined,
};

/** Records nothing: no tracing configured. */
export const NO_TRACING: RunTracing = {
  start: () => NO_TRACE,
  step: (_step, work) => work(NO_NOTES),
  currentTraceId: () => null,
  flush: () => Promise.resolve(),
};
