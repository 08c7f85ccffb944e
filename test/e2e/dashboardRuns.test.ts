import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Page } from 'playwright-core';
import type { AgentConfig } from '../../src/adapters/config/AgentConfig.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { FileRunLedger } from '../../src/adapters/persistence/FileRunLedger.js';
import type { RunRecord } from '../../src/domain/runs/RunRecord.js';
import { describeInBrowser, launchBrowser, screenshot, type TestBrowser } from '../support/browser.js';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { freePort } from '../support/freePort.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import { createJob, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { localModelLines, webhookListenerLines } from './configLines.js';

const SECRET = 'runs-browser-webhook-secret';
const ENV = { TEST_LLM_KEY: 'runs-browser-llm-key' };
/** Seeded runs: four jobs and a route, 100 each (the ledger keeps 200 of each). */
const SEEDED = 500;
/** Seeded run i started (i + 1) minutes before this whole minute. */
const BASE = Math.floor(Date.now() / 60_000) * 60_000;

/** Seeded run `i`: a webhook run of `github` every fifth, else a run of job i % 5; every seventh failed. */
function seededRun(i: number, jobIds: readonly string[], jobNames: readonly string[]): RunRecord {
  const started = new Date(BASE - (i + 1) * 60_000);
  const webhook = i % 5 === 4;
  const failed = i % 7 === 0;
  return {
    id: webhook ? `seeded-event-${i}` : `${jobIds[i % 5]}.seeded${String(i).padStart(3, '0')}`,
    kind: webhook ? 'webhook' : 'cron',
    subject: webhook ? 'github' : jobIds[i % 5]!,
    name: webhook ? 'github' : jobNames[i % 5]!,
    slot: null,
    event: webhook ? 'pull_request' : null,
    delivery_id: webhook ? `seeded-delivery-${i}` : null,
    started_at: started.toISOString(),
    finished_at: new Date(started.getTime() + 2000).toISOString(),
    status: failed ? 'error' : 'ok',
    model: 'local/test-model',
    prompt: `Seeded prompt ${i}`,
    answer: failed ? null : `Seeded answer ${i}${i === 123 ? ' with the needle-4711' : ''}`,
    error: failed ? `quota exceeded on seeded run ${i}` : null,
    deliveries: [],
  };
}

/** `YYYY-MM-DDTHH:MM` of an instant in UTC, as a datetime-local field takes it. */
const wallClock = (ms: number) => new Date(ms).toISOString().slice(0, 16);

/**
 * The run list and the run pages of the built gateway's dashboard in a browser: filters and pages
 * over 500 seeded runs, a run followed live as its transcript grows, and cancel, retry and
 * redeliver from a run's page.
 */
describeInBrowser('the run pages of the dashboard in a browser', () => {
  let home: string;
  let gateway: ChildProcess;
  let base: string;
  let browser: TestBrowser;
  let page: Page;
  let llm: FakeLlmServer;
  let telegram: FakeTelegramServer;
  let navigations: number;
  const jobIds: string[] = [];
  const jobNames = ['Alpha', 'Bravo', 'Charlie', 'Delta'];

  beforeAll(async () => {
    requireBuiltAgent();
    llm = await FakeLlmServer.start();
    telegram = await FakeTelegramServer.start();
    home = await makeAgentHome();
    const port = await freePort();
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...localModelLines(llm, 'openai'),
        ...webhookListenerLines(await freePort(), SECRET),
        '        github:',
        '          events: [pull_request]',
        '          prompt: "Review PR {number}"',
        '  telegram:',
        ...Object.entries(telegram.settings).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`),
        'dashboard:',
        '  enabled: true',
        `  port: ${port}`,
        '',
      ].join('\n'),
    );
    for (const name of jobNames) jobIds.push(await createJob(home, ['every 1d', `Report ${name}`, '--name', name, '--deliver', 'local']));
    const config = { runs: { retention_count: 200, retention_days: 30 } } as AgentConfig;
    const ledger = new FileRunLedger(agentPathsFor(home), new ManualClock(new Date(BASE)), config);
    for (let i = 0; i < SEEDED; i += 1) await ledger.save(seededRun(i, jobIds, jobNames));
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { env: ENV, withinMs: 20_000 })).gateway;
    base = `http://127.0.0.1:${port}`;
    browser = await launchBrowser();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    llm?.release();
    await llm?.close();
    await telegram?.close();
    await removeAgentHome(home);
  });

  beforeEach(async () => {
    page = await browser.newPage();
    navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });
  });

  afterEach(async () => {
    await page.close();
    // A test that failed while the model held its answers leaves none held for the next.
    llm.release();
  });

  /** The run ids the run table of the page links to, in order. */
  async function listedRuns(): Promise<string[]> {
    const links = await page
      .getByRole('table', { name: /^Runs, newest first/ })
      .getByRole('link', { name: /^Details of run / })
      .allTextContents();
    return links.map((text) => text.replace(/^Details of run /, ''));
  }

  /** Starts a run of job `id` in the gateway (the API of a loopback dashboard); its run's id once the ledger shows it running. */
  async function startRun(id: string): Promise<string> {
    expect((await fetch(`${base}/api/jobs/${id}/run`, { method: 'POST' })).status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const runs = (await (await fetch(`${base}/api/runs?job=${id}`)).json()) as Array<{ id: string; status: string }>;
      const running = runs.find((run) => run.status === 'running');
      if (running) return running.id;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no run of job ${id} shows running`);
  }

  it('pages through the 500 runs 50 at a time, each once, newest first', async () => {
    await page.goto(`${base}/runs`);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await screenshot(page, 'dashboard-runs');
    const seen: string[] = [];
    for (let pageNumber = 1; ; pageNumber += 1) {
      const ids = await listedRuns();
      seen.push(...ids);
      const next = page.getByRole('link', { name: 'Next page' });
      if ((await next.count()) === 0) break;
      expect(ids).toHaveLength(50);
      await next.click();
      await page.waitForURL(/cursor=/);
      expect(pageNumber).toBeLessThan(11);
    }
    expect(seen).toHaveLength(SEEDED);
    expect(new Set(seen).size).toBe(SEEDED);
    expect(seen[0]).toBe(seededRun(0, jobIds, jobNames).id);
    expect(seen.at(-1)).toBe(seededRun(SEEDED - 1, jobIds, jobNames).id);
  });

  it('filters by job and status, by route, by a time range and by text, and pages a filtered list', async () => {
    await page.goto(`${base}/runs`);
    await page.getByLabel('Job').selectOption({ label: 'Alpha' });
    await page.getByLabel('Status').selectOption('error');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=error/);
    const alphaErrors = Array.from({ length: SEEDED }, (_, i) => i).filter((i) => i % 5 === 0 && i % 7 === 0);
    expect(await listedRuns()).toEqual(alphaErrors.map((i) => seededRun(i, jobIds, jobNames).id));
    expect(await page.getByRole('table').locator('.status-ok').count()).toBe(0);
    await screenshot(page, 'dashboard-runs-filtered');

    await page.goto(`${base}/runs`);
    await page.getByLabel('Route').selectOption('github');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/route=github/);
    expect(await listedRuns()).toHaveLength(50);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForURL(/route=github.*cursor=/);
    expect(await listedRuns()).toEqual(Array.from({ length: 50 }, (_, n) => `seeded-event-${(n + 50) * 5 + 4}`));
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);

    await page.goto(`${base}/runs`);
    await page.getByLabel('From').fill(wallClock(BASE - 11 * 60_000));
    await page.getByLabel('To').fill(wallClock(BASE - 6 * 60_000));
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/from=/);
    expect(await listedRuns()).toEqual([6, 7, 8, 9, 10].map((i) => seededRun(i, jobIds, jobNames).id));

    await page.goto(`${base}/runs`);
    await page.getByLabel('Search').fill('NEEDLE-4711');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=NEEDLE/);
    expect(await listedRuns()).toEqual([seededRun(123, jobIds, jobNames).id]);
  });

  it('follows a run live: it shows in the list, its transcript grows on its page, and it ends, without a reload', async () => {
    const id = await createJob(home, ['every 1d', 'Look around', '--name', 'Looker', '--deliver', 'local']);
    llm.reply(
      replies.toolCalls({ name: 'terminal', arguments: { command: 'sleep 3; echo looked around' } }),
      replies.text('Done looking.'),
    );
    await page.goto(`${base}/runs?job=${id}`);
    await page.getByText('No run matches.').waitFor();
    const listLoaded = navigations;

    const startedAt = Date.now();
    const runId = await startRun(id);
    llm.hold();
    await page.getByRole('table').locator('.status-running').waitFor({ timeout: 5000 });
    expect(navigations).toBe(listLoaded);
    await page.getByRole('link', { name: `Details of run ${runId}` }).click();
    await page.getByRole('heading', { name: `Run ${runId}` }).waitFor();
    const runLoaded = navigations;

    await page.getByText('Tool terminal').waitFor({ timeout: 10_000 });
    await page.locator('dt:text-is("Status") + dd').getByText('running', { exact: true }).waitFor();
    await page
      .getByText(/^Model turn$/)
      .first()
      .waitFor();
    await page.getByText('Tool terminal').click();
    await page.getByText('"stdout":"looked around').waitFor();
    await screenshot(page, 'dashboard-run-live');

    llm.release();
    await page.locator('.status-ok').first().waitFor({ timeout: 10_000 });
    await page.getByText('Done looking.').first().waitFor();
    expect(await page.locator('ol.timeline > li.turn').count()).toBe(2);
    // What the reader opened stays open as the page follows the run.
    expect(await page.locator('ol.timeline details').first().getAttribute('open')).not.toBeNull();
    expect(navigations).toBe(runLoaded);
    expect(Date.now() - startedAt).toBeLessThan(60_000);
  });

  it('cancels a running run once confirmed, then retries it, and the ledger says the dashboard asked', async () => {
    const id = await createJob(home, ['every 1d', 'Wait for it', '--name', 'Waiter', '--deliver', 'local']);
    llm.hold();
    llm.reply(replies.text('Never sent.'), replies.text('Waited.'));
    const runId = await startRun(id);
    await page.goto(`${base}/runs/${runId}`);
    const loaded = navigations;
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('heading', { name: /^Cancel this run\?/ }).waitFor();
    await page.getByRole('button', { name: 'Yes, cancel run' }).click();
    await page.getByRole('status').filter({ hasText: 'Asked the run to stop' }).waitFor();
    await page.getByText('cancelled by dashboard').first().waitFor({ timeout: 10_000 });
    await page.locator('.status-error').first().waitFor();
    expect(navigations).toBe(loaded + 2);
    // The answer held for the cancelled run goes nowhere; the next request gets 'Waited.'.
    llm.release();

    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('heading', { name: /^Run this job again now\?/ }).waitFor();
    await page.getByRole('button', { name: 'Yes, retry' }).click();
    await page.getByRole('status').filter({ hasText: 'Job Waiter runs again' }).waitFor();
    await page.waitForURL(new RegExp(`/runs\\?job=${id}`));
    await page.getByRole('table').locator('.status-ok').first().waitFor({ timeout: 10_000 });

    const runs = JSON.parse((await runAgent(['cron', 'runs', id, '--json', '--no-tick'], { home, env: ENV })).stdout) as RunRecord[];
    expect(runs.map((run) => run.id)).toEqual([expect.any(String), runId]);
    const show = async (run: string) =>
      JSON.parse((await runAgent(['runs', 'show', run, '--json'], { home, env: ENV })).stdout) as RunRecord;
    expect(await show(runs[0]!.id)).toMatchObject({ status: 'ok', answer: 'Waited.', requested_by: 'dashboard', rerun_of: runId });
    expect(await show(runId)).toMatchObject({ status: 'error', error: 'cancelled by dashboard' });
  });

  it('delivers a recorded answer again once confirmed, shows its message ids, and the ledger says the dashboard asked', async () => {
    const id = await createJob(home, ['every 1d', 'Tell the channel', '--name', 'Teller', '--deliver', telegram.target]);
    llm.reply(replies.text('Told.'));
    expect(await runAgent(['cron', 'run', id, '--no-tick'], { home, env: ENV })).toMatchObject({ code: 0 });
    const [run] = JSON.parse((await runAgent(['cron', 'runs', id, '--json', '--no-tick'], { home, env: ENV })).stdout) as RunRecord[];
    expect(telegram.delivered).toHaveLength(1);

    await page.goto(`${base}/runs/${run!.id}`);
    await page
      .locator('li.delivery')
      .filter({ hasText: `Delivery to ${telegram.target}` })
      .getByText(/^Message ids: \d+/)
      .waitFor();
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByRole('heading', { name: /^Deliver this answer again\?/ }).waitFor();
    await page.getByRole('button', { name: 'Yes, redeliver' }).click();
    await page.getByRole('status').filter({ hasText: 'The answer was delivered again (ok).' }).waitFor();
    await page.getByText('(by dashboard)').waitFor();

    expect(telegram.delivered).toHaveLength(2);
    const shown = JSON.parse((await runAgent(['runs', 'show', run!.id, '--json'], { home, env: ENV })).stdout) as RunRecord;
    expect(shown).toMatchObject({ redelivered_by: 'dashboard', redelivered_at: expect.any(String) });
  });
});
