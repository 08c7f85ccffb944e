import { otlpTraceSettings } from '../../../src/adapters/telemetry/otlpSettings.js';

describe('otlpTraceSettings', () => {
  it('asks for no export without an endpoint, with the SDK disabled, or with the exporter none', () => {
    expect(otlpTraceSettings({})).toBeNull();
    expect(otlpTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeNull();
    expect(otlpTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(otlpTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
  });

  it('adds v1/traces to the endpoint, takes the traces endpoint as it is, and defaults to http/protobuf', () => {
    expect(otlpTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: [],
      serviceName: null,
      resourceAttributes: '',
      warnings: [],
    });
    expect(
      otlpTraceSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
      })?.url,
    ).toBe('https://traces.example/otlp');
  });

  it('reads the protocol, the headers, the service name and the resource attributes', () => {
    expect(
      otlpTraceSettings({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-team=ops',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'authorization=Bearer%20abc',
        OTEL_SERVICE_NAME: 'agent-eu',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
      }),
    ).toMatchObject({
      protocol: 'http/json',
      headers: ['x-team=ops', 'authorization=Bearer%20abc'],
      serviceName: 'agent-eu',
      resourceAttributes: 'deployment.environment=prod',
    });
  });

  it('sends gRPC as http/protobuf and says so, and refuses an endpoint that is no URL in one sentence', () => {
    expect(otlpTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatchObject({
      protocol: 'http/protobuf',
      warnings: ['the OTLP protocol "grpc" is not spoken here; spans are sent as http/protobuf'],
    });
    expect(() => otlpTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' })).toThrow(
      'The OTLP endpoint "collector/v1/traces" is not a URL; set OTEL_EXPORTER_OTLP_ENDPOINT to one like http://127.0.0.1:4318.',
    );
  });
});
