import request from 'supertest';
import type { Server } from 'node:http';
import { createWebhookApp } from '../../../src/adapters/http/webhookApp.js';
import { createFireApp } from '../../../src/adapters/http/fireApp.js';
import type { MetricsEndpoint } from '../../../src/adapters/http/metricsRoute.js';
import { closeWebhookServer, createWebhookServer, listenWebhookServer } from '../../../src/adapters/http/webhookServer.js';
import { PrometheusMetrics } from '../../../src/adapters/metrics/PrometheusMetrics.js';
import { DEFAULT_WEBHOOK_LISTENER_SETTINGS } from '../../../src/application/ports/WebhookSettings.js';
import { aRoute, FakeWebhookRoutes } from '../../support/fakes/FakeWebhookRoutes.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheusText.js';

/** The real listener app with metrics; every request to a route is answered 202 by a stand-in accept path. */
async function listen(options: { metrics?: PrometheusMetrics; token?: string | null; serveMetrics?: boolean } = {}) {
  const metrics = options.metrics ?? new PrometheusMetrics();
  const endpoint: MetricsEndpoint = { exposition: metrics, token: options.token ?? null };
  const app = createWebhookApp({
    routes: new FakeWebhookRoutes([aRoute('ci')]),
    acceptWebhook: { execute: async () => ({ kind: 'accepted' as const, route: 'ci', event: 'push', deliveryId: 'd-1', eventId: 'e-1' }) },
    settings: DEFAULT_WEBHOOK_LISTENER_SETTINGS,
    logger: new RecordingLogger(),
    ...(options.serveMetrics === false ? {} : { metricsEndpoint: endpoint, metrics }),
  });
  const server = createWebhookServer(app);
  const { port } = await listenWebhookServer(server, '127.0.0.1', 0);
  return { url: `http://127.0.0.1:${port}`, server, metrics };
}

describe('GET /metrics on the webhook listener', () => {
  let server: Server | null = null;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server) await closeWebhookServer(server);
    server = null;
  });

  it('is 404 when metrics are off', async () => {
    const listener = await listen({ serveMetrics: false });
    server = listener.server;

    const response = await request(listener.url).get('/metrics');

    expect(response.status).toBe(404);
  });

  it('is 401 without the bearer token, or with a wrong one, and serves the metrics with it', async () => {
    const listener = await listen({ token: 'scrape-me' });
    server = listener.server;

    const without = await request(listener.url).get('/metrics');
    const wrong = await request(listener.url).get('/metrics').set('Authorization', 'Bearer scrape-you');
    const right = await request(listener.url).get('/metrics').set('Authorization', 'Bearer scrape-me');

    expect(without.status).toBe(401);
    expect(without.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(without.text).not.toContain('agent_');
    expect(wrong.status).toBe(401);
    expect(right.status).toBe(200);
    expect(right.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(parsePrometheusText(right.text).types).toMatchObject({ agent_runs_total: 'counter', agent_webhook_inbox_backlog: 'gauge' });
  });

  it('counts webhook requests by the status answered, and nothing else', async () => {
    const listener = await listen();
    server = listener.server;

    await request(listener.url).post('/webhooks/ci').send('{}');
    await request(listener.url).post('/webhooks/ci').send('{}');
    await request(listener.url).post('/webhooks/nope').send('{}');
    await request(listener.url).get('/webhooks/ci');
    await request(listener.url).get('/health');
    const scraped = parsePrometheusText((await request(listener.url).get('/metrics')).text);

    expect(sampleValue(scraped, 'agent_webhook_requests_total', { status: '202' })).toBe(2);
    expect(sampleValue(scraped, 'agent_webhook_requests_total', { status: '404' })).toBe(1);
    expect(sampleValue(scraped, 'agent_webhook_requests_total', { status: '405' })).toBe(1);
    expect(scraped.samples.filter((sample) => sample.name === 'agent_webhook_requests_total')).toHaveLength(3);
  });
});

describe("GET /metrics on the fire endpoint's own listener", () => {
  it('is served behind the token when metrics are on, and 404 when off', async () => {
    const fire = {
      verifier: { verify: async () => ({ valid: false as const, reason: 'no' }) },
      fire: { execute: async () => ({ status: 'gone' as const }) },
      logger: new RecordingLogger(),
    };
    const metrics = new PrometheusMetrics();
    const on = createFireApp(fire, { exposition: metrics, token: 'scrape-me' });
    const off = createFireApp(fire);

    expect((await request(on).get('/metrics')).status).toBe(401);
    const scraped = await request(on).get('/metrics').set('Authorization', 'Bearer scrape-me');
    expect(scraped.status).toBe(200);
    expect(parsePrometheusText(scraped.text).types.agent_runs_total).toBe('counter');
    expect((await request(off).get('/metrics')).status).toBe(404);
  });
});

describe('PrometheusMetrics', () => {
  it('renders runs, durations, lateness, deliveries and the inbox backlog in the text format', async () => {
    const metrics = new PrometheusMetrics();
    metrics.runFinished('cron', 'ok', 3);
    metrics.runFinished('cron', 'delivery_failed', 40);
    metrics.runFinished('webhook', 'delivered', 0.2);
    metrics.runStarted(0.3);
    metrics.runStarted(-1);
    metrics.deliveryFinished('telegram', 'delivered');
    metrics.deliveryFinished('telegram', 'failed');
    metrics.deliveryFinished('slack', 'delivered');
    let backlog = 7;
    metrics.watchInboxBacklog(async () => backlog);

    const first = parsePrometheusText(await metrics.render());
    backlog = 2;
    const second = parsePrometheusText(await metrics.render());

    expect(sampleValue(first, 'agent_runs_total', { kind: 'cron', outcome: 'ok' })).toBe(1);
    expect(sampleValue(first, 'agent_runs_total', { kind: 'cron', outcome: 'delivery_failed' })).toBe(1);
    expect(sampleValue(first, 'agent_runs_total', { kind: 'webhook', outcome: 'delivered' })).toBe(1);
    expect(first.types.agent_run_duration_seconds).toBe('histogram');
    expect(sampleValue(first, 'agent_run_duration_seconds_count', { kind: 'cron' })).toBe(2);
    expect(sampleValue(first, 'agent_run_duration_seconds_sum', { kind: 'cron' })).toBe(43);
    expect(sampleValue(first, 'agent_run_duration_seconds_bucket', { kind: 'cron', le: '5' })).toBe(1);
    expect(sampleValue(first, 'agent_run_duration_seconds_bucket', { kind: 'cron', le: '+Inf' })).toBe(2);
    expect(sampleValue(first, 'agent_cron_firing_lateness_seconds_count')).toBe(2);
    expect(sampleValue(first, 'agent_cron_firing_lateness_seconds_bucket', { le: '0.1' })).toBe(1);
    expect(sampleValue(first, 'agent_deliveries_total', { platform: 'telegram', outcome: 'failed' })).toBe(1);
    expect(sampleValue(first, 'agent_deliveries_total', { platform: 'slack', outcome: 'delivered' })).toBe(1);
    expect(sampleValue(first, 'agent_webhook_inbox_backlog')).toBe(7);
    expect(sampleValue(second, 'agent_webhook_inbox_backlog')).toBe(2);
    expect(sampleValue(first, 'process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
  });

  it('counts the tokens of model turns by provider, model and kind, and the cost of the priced ones', async () => {
    const metrics = new PrometheusMetrics();
    metrics.modelUsage('openai', 'gpt-4o', { input_tokens: 1000, output_tokens: 50, cached_input_tokens: 400 }, 0.0015);
    metrics.modelUsage('openai', 'gpt-4o', { input_tokens: 500, output_tokens: 20, cached_input_tokens: 0 }, 0.001);
    metrics.modelUsage('local', 'llama', { input_tokens: 300, output_tokens: 30, cached_input_tokens: 0 }, null);

    const scraped = parsePrometheusText(await metrics.render());

    expect(scraped.types.agent_model_tokens_total).toBe('counter');
    expect(sampleValue(scraped, 'agent_model_tokens_total', { provider: 'openai', model: 'gpt-4o', kind: 'input' })).toBe(1500);
    expect(sampleValue(scraped, 'agent_model_tokens_total', { provider: 'openai', model: 'gpt-4o', kind: 'output' })).toBe(70);
    expect(sampleValue(scraped, 'agent_model_tokens_total', { provider: 'openai', model: 'gpt-4o', kind: 'cached_input' })).toBe(400);
    expect(sampleValue(scraped, 'agent_model_tokens_total', { provider: 'local', model: 'llama', kind: 'input' })).toBe(300);
    expect(sampleValue(scraped, 'agent_cost_usd_total', { provider: 'openai', model: 'gpt-4o' })).toBeCloseTo(0.0025, 9);
    expect(sampleValue(scraped, 'agent_cost_usd_total', { provider: 'local', model: 'llama' })).toBeUndefined();
  });

  it('keeps the last backlog when the inbox cannot be read, and still answers', async () => {
    const metrics = new PrometheusMetrics();
    let fail = false;
    metrics.watchInboxBacklog(async () => {
      if (fail) throw new Error('EIO');
      return 3;
    });
    await metrics.render();
    fail = true;

    expect(sampleValue(parsePrometheusText(await metrics.render()), 'agent_webhook_inbox_backlog')).toBe(3);
  });
});
