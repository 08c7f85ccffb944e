import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { OtlpTraceSettings } from './otlpSettings.js';

/**
 * The official OTLP/HTTP exporter of the protocol asked for: protobuf (the default of the
 * specification) or JSON. Each is loaded only when asked for, from a module that imports its
 * package statically (the packages are CommonJS, whose names a bundled dynamic import does not
 * see). The URL and the headers are given here, read from the environment the process started
 * with: the headers may hold a backend's key, which this process keeps out of its own
 * environment (docs/processes.md).
 */
export async function otlpTraceExporter(settings: OtlpTraceSettings, headers: Record<string, string>): Promise<SpanExporter> {
  const config = { url: settings.url, headers };
  const { exporterFor } =
    settings.protocol === 'http/json' ? await import('./otlpJsonExporter.js') : await import('./otlpProtobufExporter.js');
  return exporterFor(config);
}
