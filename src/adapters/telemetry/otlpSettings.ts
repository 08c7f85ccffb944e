/**
 * Whether this process exports traces, and where, from the standard OpenTelemetry variables
 * (docs/traces.md). Read without loading anything of OpenTelemetry: a process without them
 * loads none of it.
 */

/** The wire formats of OTLP over HTTP. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface OtlpTraceSettings {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT with `v1/traces` added. */
  url: string;
  protocol: OtlpProtocol;
  /** `key=value,…` (values URL-encoded) of OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS, which wins. */
  headers: readonly string[];
  /** OTEL_SERVICE_NAME; null when unset (`agent` then, unless OTEL_RESOURCE_ATTRIBUTES names one). */
  serviceName: string | null;
  /** OTEL_RESOURCE_ATTRIBUTES as written; empty when unset. */
  resourceAttributes: string;
  /** What was set that is not used, one sentence each, for the log. */
  warnings: string[];
}

const DISABLED = /^\s*true\s*$/i;

const value = (env: NodeJS.ProcessEnv, name: string): string | null => {
  const text = env[name]?.trim();
  return text ? text : null;
};

/**
 * The trace export this environment asks for, or null when it asks for none: neither endpoint
 * variable set, OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none. gRPC is not spoken: a
 * `grpc` protocol is sent as http/protobuf, with a warning.
 */
export function otlpTraceSettings(env: NodeJS.ProcessEnv): OtlpTraceSettings | null {
  const tracesEndpoint = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === null && endpoint === null) return null;
  if (DISABLED.test(env.OTEL_SDK_DISABLED ?? '')) return null;
  const exporters = (value(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp').split(',').map((each) => each.trim().toLowerCase());
  if (exporters.includes('none')) return null;
  const warnings: string[] = [];
  if (exporters.some((each) => each !== 'otlp')) {
    warnings.push(`OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER} names exporters other than otlp; spans are exported over OTLP only`);
  }
  const asked = (
    value(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    value(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf'
  ).toLowerCase();
  let protocol: OtlpProtocol = 'http/protobuf';
  if (asked === 'http/json') protocol = 'http/json';
  else if (asked !== 'http/protobuf') warnings.push(`the OTLP protocol "${asked}" is not spoken here; spans are sent as http/protobuf`);
  const url = tracesEndpoint ?? `${endpoint!.replace(/\/+$/, '')}/v1/traces`;
  if (!URL.canParse(url))
    throw new Error(`The OTLP endpoint "${url}" is not a URL; set OTEL_EXPORTER_OTLP_ENDPOINT to one like http://127.0.0.1:4318.`);
  return {
    url,
    protocol,
    headers: [value(env, 'OTEL_EXPORTER_OTLP_HEADERS'), value(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS')].filter((each) => each !== null),
    serviceName: value(env, 'OTEL_SERVICE_NAME'),
    resourceAttributes: value(env, 'OTEL_RESOURCE_ATTRIBUTES') ?? '',
    warnings,
  };
}
