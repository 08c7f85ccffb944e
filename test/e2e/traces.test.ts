import type { ChildProcess } from 'node:child_process';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { freePort } from '../support/freePort.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlpReceiver.js';
import { eventually } from '../support/processLiveness.js';
import { localModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { scratchDatabase } from '../support/postgres.js';
import {
  createJob,
  makeAgentHome,
  makeDue,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  writeHomeFile,
} from './agentCli.js';

/*
 * Traces through the built executable (docs/traces.md): a local OTLP/HTTP receiver gets the
 * spans of a webhook run from the gateway and of a cron run from `agent cron run`, with a model
 * on a local server that asks for one tool call and then answers.
 */

const SECRET = 'traces-secret';
const LLM_KEY = { TEST_LLM_KEY: 'test-llm-key' };
/** SpanKind in OTLP's numbers. */
const KIND = { internal: 1, server: 2, client: 3, consumer: 5 } as const;

describe('traces exported over OTLP/HTTP by the built executable', () => {
  let home: string;
  let llm: FakeLlmServer;
  let receiver: OtlpReceiver;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    receiver = await OtlpReceiver.start();
    home = await makeAgentHome();
  });

  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await llm.close();
    await receiver.close();
    await removeAgentHome(home);
  });

  /** The spans named `name`. */
  const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

  it('a webhook run: its trace holds the model calls, the tool call and the delivery, and links to the request that accepted it', async () => {
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...localModelLines(llm),
        ...webhookListenerLines(port, SECRET),
        '        github:',
        '          events: [pull_request]',
        '          prompt: "Review PR #{number}"',
        '          deliver: log',
        '          toolsets: [terminal]',
        '',
      ].join('\n'),
    );
    llm.reply(replies.toolCalls({ id: 'call_1', name: 'terminal', arguments: { command: 'env' } }), replies.text('Looks good.'));
    // The default protocol, http/protobuf; spans leave every 100 ms, with a backend's key as a header.
    const env = {
      ...LLM_KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-backend-key=canary-otlp-key',
      OTEL_SERVICE_NAME: 'agent-e2e',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on', { args: ['--log-format', 'json'], env });
    running.push(gateway);

    const response = await postPullRequestEvent(port, SECRET, 'delivery-traced', { action: 'opened', number: 7 });
    expect(response.status).toBe(202);

    const runSpan = () => receiver.spans.find((span) => span.name === 'webhook run github');
    const delivered = () => {
      const run = runSpan();
      return run !== undefined && named(receiver.trace(run.traceId), 'deliver the log').length === 1;
    };
    if (!(await eventually(delivered, 30_000))) throw new Error(`no whole webhook trace arrived; gateway:\n${output()}`);

    const run = runSpan()!;
    const spans = receiver.trace(run.traceId);
    expect(run).toMatchObject({
      parentSpanId: '',
      kind: KIND.consumer,
      attributes: expect.objectContaining({
        'agent.run.kind': 'webhook',
        'agent.webhook.route': 'github',
        'agent.webhook.event': 'pull_request',
        'agent.webhook.delivery_id': 'delivery-traced',
        'agent.outcome': 'delivered',
      }),
      resource: expect.objectContaining({ 'service.name': 'agent-e2e' }),
      contentType: 'application/x-protobuf',
    });
    const models = named(spans, 'chat test-model');
    expect(models).toHaveLength(2);
    for (const model of models) {
      expect(model).toMatchObject({
        parentSpanId: run.spanId,
        kind: KIND.client,
        attributes: expect.objectContaining({
          'gen_ai.system': 'openai',
          'gen_ai.provider.name': 'openai',
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'test-model',
          'gen_ai.usage.input_tokens': 12,
          'gen_ai.usage.output_tokens': 5,
          'server.address': '127.0.0.1',
        }),
      });
    }
    const [tool] = named(spans, 'execute_tool terminal');
    expect(tool).toMatchObject({
      parentSpanId: run.spanId,
      attributes: expect.objectContaining({ 'gen_ai.tool.name': 'terminal', 'gen_ai.tool.call.id': 'call_1' }),
      status: { code: 0 },
    });
    const [delivery] = named(spans, 'deliver the log');
    expect(delivery).toMatchObject({
      parentSpanId: run.spanId,
      attributes: expect.objectContaining({ 'agent.delivery.target': 'the log', 'agent.delivery.outcome': 'delivered' }),
    });
    // The exports carry the header; the terminal command, a child of the gateway, never saw it.
    expect(receiver.requests[0]).toMatchObject({ 'x-backend-key': 'canary-otlp-key' });
    expect(JSON.stringify(llm.requests[1]!.body.messages)).toContain('AGENT_');
    expect(JSON.stringify(llm.requests[1]!.body.messages)).not.toContain('canary-otlp-key');

    // The request's own span, in a trace of its own, is what the run links to.
    const accept = receiver.spans.find((span) => span.name === 'POST /webhooks/:route');
    expect(accept).toMatchObject({
      parentSpanId: '',
      kind: KIND.server,
      attributes: expect.objectContaining({
        'http.request.method': 'POST',
        'http.route': '/webhooks/:route',
        'http.response.status_code': 202,
        'agent.webhook.delivery_id': 'delivery-traced',
      }),
    });
    expect(accept!.traceId).not.toBe(run.traceId);
    expect(run.links).toEqual([expect.objectContaining({ traceId: accept!.traceId, spanId: accept!.spanId })]);

    // The run's record and the log lines of its run carry its trace id.
    const listed = await runAgent(['webhook', 'runs', '--json'], { home });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ delivery_id: 'delivery-traced', trace_id: run.traceId })]);
    const lines = output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const answerLine = lines.find((line) => String(line.message).startsWith("webhook answer on route 'github'"));
    expect(answerLine).toMatchObject({ trace_id: run.traceId });
    const acceptedLine = lines.find((line) => line.message === 'webhook accepted');
    expect(acceptedLine).toMatchObject({ trace_id: accept!.traceId });
  }, 90_000);

  it('on PostgreSQL, the run links to the request too: the traceparent is kept with the event in the database', async () => {
    const database = await scratchDatabase();
    try {
      const port = await freePort();
      await writeHomeFile(
        home,
        'config.yaml',
        [
          'timezone: UTC',
          ...localModelLines(llm),
          ...webhookListenerLines(port, SECRET),
          '        github:',
          '          events: [pull_request]',
          '          prompt: "Review PR #{number}"',
          '          deliver: log',
          '',
        ].join('\n'),
      );
      llm.reply(replies.text('Fine.'));
      const env = {
        ...LLM_KEY,
        AGENT_DATABASE_URL: database.url,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      };
      const { gateway, output } = await startGatewayUntil(home, 'webhook listening on', { env });
      running.push(gateway);

      expect((await postPullRequestEvent(port, SECRET, 'delivery-pg', { action: 'opened', number: 8 })).status).toBe(202);

      const runSpan = () => receiver.spans.find((span) => span.name === 'webhook run github');
      if (!(await eventually(() => runSpan() !== undefined, 30_000))) throw new Error(`no webhook trace arrived; gateway:\n${output()}`);
      const accept = receiver.spans.find((span) => span.name === 'POST /webhooks/:route');
      expect(runSpan()!.links).toEqual([expect.objectContaining({ traceId: accept!.traceId, spanId: accept!.spanId })]);
      const listed = await runAgent(['webhook', 'runs', '--json'], { home, env: { AGENT_DATABASE_URL: database.url } });
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ delivery_id: 'delivery-pg', trace_id: runSpan()!.traceId })]);
    } finally {
      for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
      await database.drop();
    }
  }, 90_000);

  it('agent cron run: one trace for the run, its slot-less root carrying the job, exported before the command exits (http/json)', async () => {
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
    const created = await runAgent(
      ['cron', 'create', 'every 1h', 'Check the status', '--name', 'status', '--deliver', 'local', '--no-tick', '--json'],
      {
        home,
        env: LLM_KEY,
      },
    );
    const jobId = (JSON.parse(created.stdout) as { id: string }).id;
    llm.reply(replies.toolCalls({ name: 'no_such_tool', arguments: {} }), replies.text('All good.'));
    const env = { ...LLM_KEY, OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.endpoint}/`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };

    const ran = await runAgent(['cron', 'run', 'status', '--no-tick', '--json'], { home, env });

    expect(ran).toMatchObject({ code: 0 });
    // Nothing is waited for: the spans arrived before the command exited.
    const root = receiver.spans.find((span) => span.name === 'cron run status');
    expect(root).toMatchObject({
      parentSpanId: '',
      contentType: 'application/json',
      attributes: expect.objectContaining({
        'agent.run.kind': 'cron',
        'agent.job.id': jobId,
        'agent.job.name': 'status',
        'agent.outcome': 'ok',
      }),
      resource: expect.objectContaining({ 'service.name': 'agent' }),
    });
    expect(root!.attributes['agent.cron.slot']).toBeUndefined();
    const spans = receiver.trace(root!.traceId);
    expect(named(spans, 'chat test-model').map((span) => span.parentSpanId)).toEqual([root!.spanId, root!.spanId]);
    expect(named(spans, 'execute_tool no_such_tool')).toEqual([
      expect.objectContaining({ parentSpanId: root!.spanId, status: expect.objectContaining({ code: 2 }) }),
    ]);
    // The output file of a job delivering `local` is its delivery.
    expect(named(spans, 'deliver local')).toEqual([
      expect.objectContaining({
        parentSpanId: root!.spanId,
        attributes: expect.objectContaining({ 'agent.delivery.outcome': 'delivered' }),
      }),
    ]);
    expect(JSON.parse(ran.stdout)).toMatchObject({ trace_id: root!.traceId });
    const runs = await runAgent(['cron', 'runs', 'status', '--json'], { home });
    expect(JSON.parse(runs.stdout)).toEqual([expect.objectContaining({ trace_id: root!.traceId })]);
  }, 60_000);

  it("the gateway's cron run: its root span carries the slot, and the line at the run's end the trace id", async () => {
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
    const id = await createJob(home, ['every 1h', 'Report', '--name', 'report', '--deliver', 'local']);
    await makeDue(home, id, 2_000);
    llm.reply(replies.text('All quiet.'));
    const env = { ...LLM_KEY, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '100' };
    const { gateway, output } = await startGatewayUntil(home, 'gateway started', { args: ['--log-format', 'json'], env });
    running.push(gateway);

    const root = () => receiver.spans.find((span) => span.name === 'cron run report');
    if (!(await eventually(() => root() !== undefined, 30_000))) throw new Error(`no cron trace arrived; gateway:\n${output()}`);

    const slot = root()!.attributes['agent.cron.slot'];
    expect(typeof slot === 'string' && !Number.isNaN(Date.parse(slot))).toBe(true);
    expect(root()!.attributes).toMatchObject({ 'agent.job.id': id, 'agent.outcome': 'ok' });
    expect(named(receiver.trace(root()!.traceId), 'chat test-model')).toHaveLength(1);
    const ended = output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => String(line.message).startsWith(`Ran job ${id}`));
    expect(ended).toMatchObject({ job: id, trace_id: root()!.traceId });
  }, 60_000);

  it('agent chat -q: the question is a chat turn of its own, its model call a child', async () => {
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
    llm.reply(replies.text('Noon.'));

    const asked = await runAgent(['chat', '-q', 'What time is it?'], {
      home,
      env: { ...LLM_KEY, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
    });

    expect(asked).toMatchObject({ code: 0 });
    const turn = receiver.spans.find((span) => span.name === 'chat turn cli');
    expect(turn).toMatchObject({
      parentSpanId: '',
      attributes: expect.objectContaining({ 'agent.run.kind': 'chat', 'agent.outcome': 'answered' }),
    });
    expect(named(receiver.trace(turn!.traceId), 'chat test-model')).toEqual([expect.objectContaining({ parentSpanId: turn!.spanId })]);
  }, 60_000);

  it('without the variables, no trace id is recorded', async () => {
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
    await runAgent(['cron', 'create', 'every 1h', 'Check the status', '--name', 'status', '--deliver', 'local', '--no-tick'], {
      home,
      env: LLM_KEY,
    });
    llm.reply(replies.text('All good.'));

    const ran = await runAgent(['cron', 'run', 'status', '--no-tick', '--json'], { home, env: LLM_KEY });

    expect(ran).toMatchObject({ code: 0 });
    expect(JSON.parse(ran.stdout)).toMatchObject({ trace_id: null });
    const runs = await runAgent(['cron', 'runs', 'status', '--json'], { home });
    expect(JSON.parse(runs.stdout)).toEqual([expect.objectContaining({ trace_id: null })]);
    expect(receiver.spans).toEqual([]);
  }, 60_000);
});
