import { AsyncLocalStorage } from 'node:async_hooks';
import type { RunTracing, SpanNoter, SpanNotes, TracedRoot, TracedStep, TraceHandle } from '../../../src/application/ports/RunTracing.js';

/** A span as the fake keeps it. */
export interface RecordedSpan {
  id: number;
  traceId: string;
  /** The id of the span it is a child of; null for a root. */
  parent: number | null;
  what: TracedRoot | TracedStep;
  notes: SpanNotes[];
  /** Whether `work` threw (steps) or `end` was called (roots). */
  threw: boolean;
  ended: boolean;
}

/**
 * Keeps the spans the use cases make, in the order they start, with the same notion of "current"
 * as the OpenTelemetry adapter (an AsyncLocalStorage): a step is a child of the span current
 * where it starts. Trace ids are `trace-<n>`.
 */
export class RecordingTracing implements RunTracing {
  readonly spans: RecordedSpan[] = [];
  private readonly current = new AsyncLocalStorage<RecordedSpan>();
  private traces = 0;

  start(root: TracedRoot): TraceHandle {
    this.traces += 1;
    const span = this.add(`trace-${this.traces}`, null, root);
    return {
      traceId: span.traceId,
      traceparent: `00-${span.traceId}-${span.id}-01`,
      within: (work) => this.current.run(span, work),
      note: (notes) => span.notes.push(notes),
      end: (notes) => {
        if (notes) span.notes.push(notes);
        span.ended = true;
      },
    };
  }

  async step<T>(step: TracedStep, work: (span: SpanNoter) => Promise<T>): Promise<T> {
    const parent = this.current.getStore();
    if (!parent) this.traces += 1;
    const span = this.add(parent?.traceId ?? `trace-${this.traces}`, parent?.id ?? null, step);
    try {
      return await this.current.run(span, () => work({ note: (notes) => span.notes.push(notes) }));
    } catch (error) {
      span.threw = true;
      throw error;
    } finally {
      span.ended = true;
    }
  }

  currentTraceId(): string | null {
    return this.current.getStore()?.traceId ?? null;
  }

  async flush(): Promise<void> {}

  /** The spans of `kind`. */
  of(kind: (TracedRoot | TracedStep)['kind']): RecordedSpan[] {
    return this.spans.filter((span) => span.what.kind === kind);
  }

  private add(traceId: string, parent: number | null, what: TracedRoot | TracedStep): RecordedSpan {
    const span: RecordedSpan = { id: this.spans.length + 1, traceId, parent, what, notes: [], threw: false, ended: false };
    this.spans.push(span);
    return span;
  }
}
