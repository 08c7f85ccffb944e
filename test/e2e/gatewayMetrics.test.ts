import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { parsePrometheusText, sampleValue, type PrometheusExposition } from '../support/prometheusText.js';
import {
  createJob,
  errorSentence,
  makeAgentHome,
  makeDue,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startGatewayUntil,
  storedJob,
  writeHomeFile,
} from './agentCli.js';
import { postPullRequestEvent } from './signedDelivery.js';
import { commandModelLines } from './configLines.js';

const SECRET = 'it-is-a-secret';
const TOKEN = 'scrape-me';

/** config.yaml with the webhook listener on `host` (127.0.0.1; null leaves the default, 0.0.0.0) and `port`, and the `metrics` lines under `extra`. */
function configWith(home: string, port: number, metrics: string[], host: string | null = '127.0.0.1'): Promise<string> {
  return writeHomeFile(
    home,
    'config.yaml',
    [
      'timezone: UTC',
      ...commandModelLines([process.execPath, `${home}/model.mjs`]),
      'platforms:',
      '  webhook:',
      '    enabled: true',
      '    extra:',
      ...(host === null ? [] : [`      host: ${host}`]),
      `      port: ${port}`,
      `      secret: ${SECRET}`,
      ...metrics.map((line) => `      ${line}`),
      '      routes:',
      '        github:',
      '          events: [pull_request]',
      '          prompt: "Review PR #{number}"',
      '',
    ].join('\n'),
  );
}

const postSigned = (port: number, delivery: string, payload: object) => postPullRequestEvent(port, SECRET, delivery, payload);

/** `GET /metrics` of the gateway as a Prometheus server scrapes it. */
async function scrape(port: number): Promise<PrometheusExposition> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return parsePrometheusText(await response.text());
}

/** Scrapes until `holds` is true of the metrics, or `timeoutMs` passes; returns the last scrape. */
async function scrapeUntil(
  port: number,
  holds: (metrics: PrometheusExposition) => boolean,
  timeoutMs = 10_000,
): Promise<PrometheusExposition> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const metrics = await scrape(port);
    if (holds(metrics) || Date.now() >= deadline) return metrics;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** GET /metrics of the gateway, as an operator's Prometheus sees it. */
describe('agent gateway metrics', () => {
  let home: string;
  let port: number;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
    port = await freePort();
  });

  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await removeAgentHome(home);
  });

  it('counts a cron run and a webhook event and samples the event loop, behind the bearer token', async () => {
    await configWith(home, port, ['metrics: true', `metrics_token: ${TOKEN}`]);
    const id = await createJob(home, ['every 1h', 'Report', '--name', 'report', '--deliver', 'local']);
    await makeDue(home, id, 2_000);
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 15_000)).toBe(true);
    expect((await postSigned(port, 'delivery-1', { action: 'opened', number: 42 })).status).toBe(202);
    expect(await eventually(() => output().includes('Answer to: Review PR #42'), 10_000)).toBe(true);
    const unauthorised = await fetch(`http://127.0.0.1:${port}/metrics`);
    const metrics = await scrapeUntil(
      port,
      (scraped) =>
        sampleValue(scraped, 'agent_runs_total', { kind: 'webhook', outcome: 'delivered' }) === 1 &&
        sampleValue(scraped, 'agent_webhook_inbox_backlog') === 0,
    );

    expect(unauthorised.status).toBe(401);
    expect(sampleValue(metrics, 'agent_runs_total', { kind: 'cron', outcome: 'ok' })).toBe(1);
    expect(sampleValue(metrics, 'agent_runs_total', { kind: 'webhook', outcome: 'delivered' })).toBe(1);
    expect(sampleValue(metrics, 'agent_run_duration_seconds_count', { kind: 'cron' })).toBe(1);
    expect(sampleValue(metrics, 'agent_run_duration_seconds_count', { kind: 'webhook' })).toBe(1);
    // Due 2 s before the gateway started: at least that late.
    expect(sampleValue(metrics, 'agent_cron_firing_lateness_seconds_count')).toBe(1);
    expect(sampleValue(metrics, 'agent_cron_firing_lateness_seconds_sum')).toBeGreaterThanOrEqual(2);
    expect(sampleValue(metrics, 'agent_webhook_requests_total', { status: '202' })).toBe(1);
    expect(sampleValue(metrics, 'agent_webhook_inbox_backlog')).toBe(0);
    // Sampled since start-up, in seconds beyond the 20 ms timer: small, never negative.
    expect(metrics.types.agent_event_loop_delay_seconds).toBe('gauge');
    for (const quantile of ['0.5', '0.99', '1']) {
      const delay = sampleValue(metrics, 'agent_event_loop_delay_seconds', { quantile });
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(60);
    }
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
  }, 120_000);

  it('does not serve /metrics when metrics are off', async () => {
    await configWith(home, port, []);
    const { gateway } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const response = await fetch(`http://127.0.0.1:${port}/metrics`);

    expect(response.status).toBe(404);
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  });

  describe('without a token', () => {
    const refusal = (configFile: string) =>
      `${configFile}: platforms.webhook.extra.metrics is true without platforms.webhook.extra.metrics_token, which is refused unless the listener ` +
      'is bound to a loopback address (platforms.webhook.extra.host is 0.0.0.0); set platforms.webhook.extra.metrics_token, ' +
      'or bind the listener to a loopback host by setting platforms.webhook.extra.host to 127.0.0.1.';

    it('refuses to start on the default host, 0.0.0.0: exit 1 and one sentence naming both keys', async () => {
      const configFile = await configWith(home, port, ['metrics: true'], null);

      const run = await runAgent(['gateway'], { home });

      expect(run.code).toBe(1);
      expect(errorSentence(run)).toBe(`error: ${refusal(configFile)}`);
      expect(run.stdout).not.toContain('listening on');
    });

    it("refuses to start on 0.0.0.0 also when only the managed trigger's fire endpoint would serve /metrics (webhooks off)", async () => {
      const configFile = await writeHomeFile(
        home,
        'config.yaml',
        [
          'timezone: UTC',
          'cron:',
          '  provider: managed',
          '  managed:',
          '    portal_url: http://127.0.0.1:1',
          '    callback_url: http://127.0.0.1:1',
          '    expected_audience: agent',
          '    jwks_url: http://127.0.0.1:1/jwks',
          'platforms:',
          '  webhook:',
          '    enabled: false',
          '    extra:',
          `      port: ${port}`,
          '      metrics: true',
          '',
        ].join('\n'),
      );

      const run = await runAgent(['gateway'], { home, env: { AGENT_CRON_SCHEDULER_TOKEN: 'scheduler-token' } });

      expect(run.code).toBe(1);
      expect(errorSentence(run)).toBe(`error: ${refusal(configFile)}`);
      expect(run.stdout).not.toContain('listening on');
    });

    it('is named by agent config check', async () => {
      const configFile = await configWith(home, port, ['metrics: true'], null);

      const run = await runAgent(['config', 'check'], { home });

      expect(run.code).toBe(1);
      expect(run.stdout).toContain(refusal(configFile));
      expect(errorSentence(run)).toMatch(/^error: 1 problem found \(config\.yaml 1 problem; /);
    });

    it('starts on 127.0.0.1, which only this machine reaches, and serves /metrics there', async () => {
      await configWith(home, port, ['metrics: true']);
      const { gateway } = await startGatewayUntil(home, 'webhook listening on');
      running.push(gateway);

      const response = await fetch(`http://127.0.0.1:${port}/metrics`);

      expect(response.status).toBe(200);
      expect(await response.text()).toContain('agent_webhook_inbox_backlog');
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    });
  });

  it('starts on 0.0.0.0 with a token, and /metrics then answers only the bearer of that token', async () => {
    await configWith(home, port, ['metrics: true', `metrics_token: ${TOKEN}`], null);
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const without = await fetch(`http://127.0.0.1:${port}/metrics`);
    const wrong = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: 'Bearer guess' } });
    const metrics = await scrape(port);

    expect(output()).toContain(`webhook listening on 0.0.0.0:${port}`);
    expect(without.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(sampleValue(metrics, 'agent_webhook_inbox_backlog')).toBe(0);
    // Sampled since start-up, in seconds beyond the 20 ms timer: small, never negative.
    expect(metrics.types.agent_event_loop_delay_seconds).toBe('gauge');
    for (const quantile of ['0.5', '0.99', '1']) {
      const delay = sampleValue(metrics, 'agent_event_loop_delay_seconds', { quantile });
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(60);
    }
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
  });
});
