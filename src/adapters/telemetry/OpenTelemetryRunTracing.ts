import {
  diag,
  DiagLogLevel,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { parseKeyPairsIntoRecord, parseTraceParent } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from '../../application/ports/Logger.js';
import type { RunTracing, SpanNoter, SpanNotes, TracedRoot, TracedStep, TraceHandle } from '../../application/ports/RunTracing.js';
import { errorText } from '../../domain/errors.js';
import type { OtlpTraceSettings } from './otlpSettings.js';
import { noteAttributes, rootShape, stepShape } from './spanShapes.js';

/** The instrumentation scope of every span. */
const SCOPE = 'agent';

export interface OpenTelemetryRunTracingOptions {
  /** The service's resource: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. */
  settings: Pick<OtlpTraceSettings, 'serviceName' | 'resourceAttributes'>;
  /** `service.version`. */
  version: string;
  /** Where ended spans go: a batch over the OTLP exporter, or (tests) a simple processor over an in-memory exporter. */
  processor: SpanProcessor;
  /** Which traces are kept; default the SDK's, from OTEL_TRACES_SAMPLER. */
  sampler?: Sampler;
}

/**
 * The RunTracing port over the official OpenTelemetry SDK (docs/adr/0021-opentelemetry-traces.md):
 * a tracer provider of its own (the process's global one is left alone), whose spans are made
 * current through an AsyncLocalStorage context manager of its own, so that a step started
 * anywhere under a run's `within` is that run's child without the context being passed along.
 * Loaded by dynamic import, only when OTLP export is configured.
 */
export class OpenTelemetryRunTracing implements RunTracing {
  private readonly contexts = new AsyncLocalStorageContextManager().enable();
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  constructor(options: OpenTelemetryRunTracingOptions) {
    const attributes = parseKeyPairsIntoRecord(options.settings.resourceAttributes);
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        ...attributes,
        [ATTR_SERVICE_NAME]: options.settings.serviceName ?? attributes[ATTR_SERVICE_NAME] ?? 'agent',
        [ATTR_SERVICE_VERSION]: options.version,
      }),
      spanProcessors: [options.processor],
      ...(options.sampler ? { sampler: options.sampler } : {}),
    });
    this.tracer = this.provider.getTracer(SCOPE, options.version);
  }

  /** Exporting to the OTLP endpoint of `settings`; the SDK's own complaints (an export that failed) go to `logger`. */
  static async exporting(settings: OtlpTraceSettings, version: string, logger: Logger): Promise<OpenTelemetryRunTracing> {
    forwardDiagnostics(logger);
    const { otlpTraceExporter } = await import('./otlpTraceExporter.js');
    const exporter: SpanExporter = await otlpTraceExporter(settings, parseKeyPairsIntoRecord(settings.headers.join(',')));
    return new OpenTelemetryRunTracing({ settings, version, processor: new BatchSpanProcessor(exporter) });
  }

  start(root: TracedRoot): TraceHandle {
    const shape = rootShape(root);
    const links = root.kind === 'webhook_run' ? linksTo(root.links) : [];
    const span = this.tracer.startSpan(shape.name, { kind: shape.kind, attributes: shape.attributes, links, root: true }, ROOT_CONTEXT);
    const context = trace.setSpan(ROOT_CONTEXT, span);
    const { traceId, spanId, traceFlags } = span.spanContext();
    const sampled = (traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
    let ended = false;
    return {
      // A trace the sampler left out is in no backend: no record or log line names it.
      traceId: sampled ? traceId : null,
      traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`,
      within: (work) => this.contexts.with(context, work),
      note: (notes) => noted(span, notes),
      end: (notes) => {
        if (ended) return;
        ended = true;
        if (notes) noted(span, notes);
        span.end();
      },
    };
  }

  async step<T>(step: TracedStep, work: (span: SpanNoter) => Promise<T>): Promise<T> {
    const shape = stepShape(step);
    const parent = this.contexts.active();
    const span = this.tracer.startSpan(shape.name, { kind: shape.kind, attributes: shape.attributes }, parent);
    try {
      return await this.contexts.with(trace.setSpan(parent, span), () => work({ note: (notes) => noted(span, notes) }));
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorText(error) });
      throw error;
    } finally {
      span.end();
    }
  }

  currentTraceId(): string | null {
    return traceIdIn(this.contexts.active());
  }

  async flush(): Promise<void> {
    await this.provider.forceFlush().catch(() => undefined);
  }

  /** Exports what is left and stops: the end of the process. Never throws. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
    this.contexts.disable();
  }
}

function traceIdIn(context: Context): string | null {
  const span = trace.getSpan(context);
  if (!span) return null;
  const spanContext = span.spanContext();
  const sampled = (spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
  return isSpanContextValid(spanContext) && sampled ? spanContext.traceId : null;
}

function noted(span: Span, notes: SpanNotes): void {
  span.setAttributes(noteAttributes(notes));
  if (notes.error) span.setStatus({ code: SpanStatusCode.ERROR, message: notes.error });
}

/** The links of a run to the requests that accepted its events; a traceparent that cannot be read is left out. */
function linksTo(traceparents: readonly string[]): Link[] {
  return traceparents.flatMap((traceparent) => {
    const context = parseTraceParent(traceparent);
    // Stored by another process, maybe: a remote span's context.
    return context && isSpanContextValid(context)
      ? [{ context: { ...context, isRemote: true }, attributes: { 'agent.link': 'webhook_request' } }]
      : [];
  });
}

let diagnosticsForwarded = false;

/**
 * The SDK says what went wrong (an export the endpoint refused or never answered) through its
 * `diag` logger: the first of its errors is a warning in this process's log, the rest debug
 * lines, so that an unreachable collector is said once, not every few seconds.
 */
function forwardDiagnostics(logger: Logger): void {
  if (diagnosticsForwarded) return;
  diagnosticsForwarded = true;
  let warned = false;
  const error = (message: string, ...args: unknown[]) => {
    const text = `traces: ${[message, ...args.map((arg) => errorText(arg))].join(' ')}`;
    if (warned) logger.debug(text);
    else logger.warn(`${text} (further export problems are logged at debug level)`);
    warned = true;
  };
  diag.setLogger(
    { error, warn: error, info: () => undefined, debug: () => undefined, verbose: () => undefined },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}
