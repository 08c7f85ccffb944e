import { AlwaysOffSampler, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { OpenTelemetryRunTracing } from '../../../src/adapters/telemetry/OpenTelemetryRunTracing.js';

describe('OpenTelemetryRunTracing', () => {
  let exported: InMemorySpanExporter;
  let tracing: OpenTelemetryRunTracing;

  const make = (settings: { serviceName: string | null; resourceAttributes: string } = { serviceName: null, resourceAttributes: '' }) => {
    exported = new InMemorySpanExporter();
    tracing = new OpenTelemetryRunTracing({ settings, version: '1.2.3', processor: new SimpleSpanProcessor(exported) });
  };
  beforeEach(() => make());
  afterEach(() => tracing.shutdown());

  const spans = () => exported.getFinishedSpans();
  const named = (name: string): ReadableSpan => {
    const found = spans().find((span) => span.name === name);
    if (!found) throw new Error(`no span ${name} among ${spans().map((span) => span.name)}`);
    return found;
  };
  const cronRun = { kind: 'cron_run', jobId: 'abc123', jobName: 'report', runId: 'abc123.1', slot: '2026-06-01T08:00:00.000Z' } as const;

  it('makes the steps started within a run children of its root span, and knows the trace id only within it', async () => {
    const trace = tracing.start(cronRun);
    expect(tracing.currentTraceId()).toBeNull();

    const seen = await trace.within(async () => {
      const inside = tracing.currentTraceId();
      await tracing.step(
        { kind: 'model_call', api: 'openai', provider: 'openrouter', model: 'gpt-x', endpoint: 'https://openrouter.ai/api/v1' },
        async (span) => {
          span.note({ usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 100 } });
        },
      );
      await tracing.step({ kind: 'tool_call', tool: 'terminal', callId: 'call_1' }, async () => {
        await tracing.step({ kind: 'delivery', target: 'telegram:-100', platform: 'telegram' }, async (span) =>
          span.note({ outcome: 'delivered', messageIds: ['41', '42'] }),
        );
      });
      return inside;
    });
    trace.end({ outcome: 'ok' });

    const root = named('cron run report');
    expect(seen).toBe(trace.traceId);
    expect(tracing.currentTraceId()).toBeNull();
    expect(root.spanContext().traceId).toBe(trace.traceId);
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toMatchObject({
      'agent.run.kind': 'cron',
      'agent.job.id': 'abc123',
      'agent.cron.slot': '2026-06-01T08:00:00.000Z',
      'agent.outcome': 'ok',
    });
    const model = named('chat gpt-x');
    expect(model.kind).toBe(SpanKind.CLIENT);
    expect(model.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(model.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-x',
      'agent.provider': 'openrouter',
      'server.address': 'openrouter.ai',
      'server.port': 443,
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 100,
    });
    const tool = named('execute_tool terminal');
    expect(tool.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.name': 'terminal', 'gen_ai.tool.call.id': 'call_1' });
    const delivery = named('deliver telegram');
    expect(delivery.parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    expect(delivery.attributes).toMatchObject({
      'agent.delivery.target': 'telegram:-100',
      'agent.delivery.platform': 'telegram',
      'agent.delivery.message_ids': ['41', '42'],
      'messaging.message.id': '41',
    });
  });

  it('gives the root span as a W3C traceparent, which a later run links to', async () => {
    const request = tracing.start({ kind: 'webhook_request', route: 'github' });
    request.end({ httpStatus: 202, outcome: 'accepted', webhook: { event: 'push', deliveryId: 'd-1', eventId: 'e-1' } });
    expect(request.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const run = tracing.start({
      kind: 'webhook_run',
      route: 'github',
      event: 'push',
      deliveryId: 'd-1',
      eventId: 'e-1',
      links: [request.traceparent!, 'not a traceparent'],
    });
    run.end();

    const accepted = named('POST /webhooks/:route');
    expect(accepted.kind).toBe(SpanKind.SERVER);
    expect(accepted.attributes).toMatchObject({
      'http.response.status_code': 202,
      'agent.webhook.event_id': 'e-1',
      'url.path': '/webhooks/github',
    });
    const webhookRun = named('webhook run github');
    expect(webhookRun.spanContext().traceId).not.toBe(accepted.spanContext().traceId);
    expect(webhookRun.links.map((link) => link.context)).toEqual([
      expect.objectContaining({ traceId: accepted.spanContext().traceId, spanId: accepted.spanContext().spanId, isRemote: true }),
    ]);
  });

  it('marks a step that throws as failed and throws on, and one that noted an error as failed', async () => {
    const trace = tracing.start(cronRun);
    await expect(
      trace.within(() =>
        tracing.step({ kind: 'model_call', api: 'anthropic', provider: 'anthropic', model: 'claude' }, async () => {
          throw new Error('HTTP 529 overloaded');
        }),
      ),
    ).rejects.toThrow('HTTP 529 overloaded');
    await trace.within(() =>
      tracing.step({ kind: 'delivery', target: 'the log', platform: null }, async (span) =>
        span.note({ outcome: 'failed', error: 'disk full' }),
      ),
    );
    trace.end();
    trace.end();

    expect(named('chat claude').status).toEqual({ code: SpanStatusCode.ERROR, message: 'HTTP 529 overloaded' });
    expect(named('chat claude').events.map((event) => event.name)).toEqual(['exception']);
    expect(named('deliver the log')).toMatchObject({
      kind: SpanKind.INTERNAL,
      status: { code: SpanStatusCode.ERROR, message: 'disk full' },
    });
    expect(spans().filter((span) => span.name === 'cron run report')).toHaveLength(1);
  });

  it('starts a trace of its own for a step outside any run, and a new trace for a run started within another', async () => {
    await tracing.step({ kind: 'delivery', target: 'the log', platform: null }, async () => undefined);
    const outer = tracing.start(cronRun);
    await outer.within(async () => tracing.start({ kind: 'chat_turn', platform: 'telegram', conversation: 'telegram:1' }).end());
    outer.end();

    expect(named('deliver the log').parentSpanContext).toBeUndefined();
    expect(named('chat turn telegram').spanContext().traceId).not.toBe(outer.traceId);
    expect(named('chat turn telegram').parentSpanContext).toBeUndefined();
  });

  it('names the service from OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES, else agent', async () => {
    const serviceOf = async (settings: { serviceName: string | null; resourceAttributes: string }) => {
      await tracing.shutdown();
      make(settings);
      tracing.start(cronRun).end();
      return spans()[0]!.resource.attributes;
    };

    expect(await serviceOf({ serviceName: null, resourceAttributes: '' })).toMatchObject({
      'service.name': 'agent',
      'service.version': '1.2.3',
    });
    expect(await serviceOf({ serviceName: null, resourceAttributes: 'service.name=cron%20box,deployment.environment=prod' })).toMatchObject(
      {
        'service.name': 'cron box',
        'deployment.environment': 'prod',
      },
    );
    expect(await serviceOf({ serviceName: 'agent-eu', resourceAttributes: 'service.name=other' })).toMatchObject({
      'service.name': 'agent-eu',
    });
  });

  it('names no trace id for a trace the sampler leaves out, whose traceparent says so', async () => {
    await tracing.shutdown();
    exported = new InMemorySpanExporter();
    tracing = new OpenTelemetryRunTracing({
      settings: { serviceName: null, resourceAttributes: '' },
      version: '1',
      processor: new SimpleSpanProcessor(exported),
      sampler: new AlwaysOffSampler(),
    });

    const trace = tracing.start(cronRun);
    const inside = await trace.within(async () => tracing.currentTraceId());
    trace.end();

    expect(trace.traceId).toBeNull();
    expect(inside).toBeNull();
    expect(trace.traceparent).toMatch(/-00$/);
    expect(spans()).toEqual([]);
  });
});
