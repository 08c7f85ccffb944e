import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

/** OTLP/HTTP with protobuf bodies (`http/protobuf`, the default). */
export function exporterFor(config: { url: string; headers: Record<string, string> }): SpanExporter {
  return new OTLPTraceExporter(config);
}
