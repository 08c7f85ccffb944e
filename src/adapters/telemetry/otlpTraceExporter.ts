import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { OtlpTraceSettings } from './otlpSettings.js';

/**
 * The official OTLP/HTTP exporter of the protocol asked for: protobuf (the default of the
 * specification) or JSON. Each is loaded only when asked for. The URL and the headers are given
 * here, read from the environment the process started with: the headers may hold a backend's key,
 * which this process keeps out of its own environment (docs/processes.md).
 */
export async function otlpTraceExporter(settings: OtlpTraceSettings, headers: Record<string, string>): Promise<SpanExporter> {
  const config = { url: settings.url, headers };
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(config);
}
