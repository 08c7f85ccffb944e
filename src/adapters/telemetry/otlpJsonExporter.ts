import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/** OTLP/HTTP with JSON bodies (`http/json`). */
export function exporterFor(config: { url: string; headers: Record<string, string> }): SpanExporter {
  return new OTLPTraceExporter(config);
}
