import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { FileRunLedger } from '../../src/adapters/persistence/FileRunLedger.js';
import type { RunRecord, RunStatus } from '../../src/domain/runs/RunRecord.js';
import { mkdirSync } from 'node:fs';
import { describeInBrowser, launchBrowser, screenshot, SCREENSHOT_DIR, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/freePort.js';
import { createJob, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil } from './agentCli.js';
import { webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';

const TOKEN = 'looks-dashboard-token';
const SECRET = 'looks-webhook-secret';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const HOUR = 3_600_000;

/** Whether `condition` holds within `withinMs`, asked every 50 ms. */
async function eventually(condition: () => Promise<boolean>, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/** The sizes and colour schemes every page is looked at in. */
const VIEWS = [
  { width: 1280, height: 900, scheme: 'light' },
  { width: 1280, height: 900, scheme: 'dark' },
  { width: 390, height: 844, scheme: 'light' },
  { width: 390, height: 844, scheme: 'dark' },
] as const;

/** Seeded runs of the ledger: `count` of `status` for `subject`, `hoursAgo` apart from `firstHoursAgo`. */
function seededRuns(
  subject: { kind: RunRecord['kind']; id: string; name: string },
  status: RunStatus,
  count: number,
  firstHoursAgo: number,
  everyHours: number,
  cost: number | null,
): RunRecord[] {
  const now = Date.now();
  return Array.from({ length: count }, (_unused, index) => {
    const started = new Date(now - (firstHoursAgo + index * everyHours) * HOUR);
    return {
      id: `seed-${subject.id}-${status}-${firstHoursAgo}-${index}`,
      kind: subject.kind,
      subject: subject.id,
      name: subject.name,
      slot: null,
      event: subject.kind === 'webhook' ? 'pull_request' : null,
      delivery_id: subject.kind === 'webhook' ? `seed-delivery-${status}-${firstHoursAgo}-${index}` : null,
      started_at: started.toISOString(),
      finished_at: new Date(started.getTime() + 1000 + index * 250).toISOString(),
      status,
      model: cost === null ? null : index % 3 === 0 ? 'openai/gpt-5-mini' : 'anthropic/claude-sonnet-4',
      prompt: 'Seeded',
      answer: status === 'ok' ? 'All good.' : null,
      error: status === 'ok' ? null : 'It went wrong.',
      deliveries: [],
      usage: cost === null ? null : { input_tokens: 1200, output_tokens: 300, cached_input_tokens: 0, model_turns: 2, tool_calls: 1 },
      cost_usd: cost,
    };
  });
}

/**
 * The dashboard's looks and habits in a real browser, over a home seeded with runs: every page
 * at 1280 and 390 px, light and dark, without a serious or critical axe-core violation and
 * without sideways scrolling; the overview's counts, links and charts; the keyboard; the
 * webhooks page making, testing and removing a subscription. The screenshots are those of
 * docs/dashboard.md (`npm run screenshots`).
 */
describeInBrowser('the dashboard looked at in a browser', () => {
  let home: string;
  let gateway: ChildProcess;
  let base: string;
  let browser: TestBrowser;
  let page: Page;
  let problems: string[];
  let jobIds: Record<string, string>;
  let runId: string;

  beforeAll(async () => {
    requireBuiltAgent();
    home = await makeAgentHome();
    const port = await freePort();
    const webhookPort = await freePort();
    await appendFile(
      join(home, 'config.yaml'),
      [
        'dashboard:',
        '  enabled: true',
        `  port: ${port}`,
        ...webhookListenerLines(webhookPort, SECRET),
        '        github:',
        '          events: [pull_request]',
        '          prompt: "Review PR {number}"',
        '',
      ].join('\n'),
    );
    await createJob(home, ['every 1h', 'Count the stars', '--name', 'Stars']);
    await createJob(home, ['every 2h', 'Read the news', '--name', 'News']);
    await createJob(home, ['every 1d', 'Water the plants', '--name', 'Plants']);
    const listed = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<{
      id: string;
      name: string;
    }>;
    jobIds = Object.fromEntries(listed.map((job) => [job.name, job.id]));
    expect((await runAgent(['cron', 'pause', jobIds.Plants!, '--reason', 'On holiday'], { home })).code).toBe(0);
    expect((await runAgent(['cron', 'run', jobIds.News!], { home })).code).toBe(0);

    const ledger = new FileRunLedger(agentPathsFor(home), { now: () => new Date() });
    const stars = { kind: 'cron' as const, id: jobIds.Stars!, name: 'Stars' };
    const github = { kind: 'webhook' as const, id: 'github', name: 'github' };
    const seeded = [
      ...seededRuns(stars, 'ok', 20, 0.5, 1, 0.0125),
      ...seededRuns(stars, 'error', 4, 2.2, 5, null),
      ...seededRuns(stars, 'ok', 25, 30, 24, 0.02),
      ...seededRuns(github, 'ok', 8, 1.5, 3, 0.004),
      ...seededRuns(github, 'delivery_failed', 2, 40, 48, 0.004),
      ...seededRuns(stars, 'skipped', 3, 100, 30, null),
    ];
    for (const run of seeded) await ledger.save(run);
    runId = seeded[0]!.id;

    gateway = (await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: TOKEN }, withinMs: 20_000 }))
      .gateway;
    base = `http://127.0.0.1:${port}`;
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    // Two events of the config route, run to their end, so that the webhooks page has events and a last delivery.
    for (const [delivery, number] of [
      ['looks-delivery-1', 7],
      ['looks-delivery-2', 8],
    ] as const)
      expect(
        (await postPullRequestEvent(webhookPort, SECRET, delivery, { action: 'opened', number, pull_request: { title: 'Fix' } })).status,
      ).toBe(202);
    const ran = async () =>
      (await ledger.list({ kind: 'webhook', subject: 'github', limit: 50 })).filter(
        (run) => !run.id.startsWith('seed-') && run.finished_at !== null,
      ).length === 2;
    expect(await eventually(ran, 30_000)).toBe(true);
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    await removeAgentHome(home);
  });

  beforeEach(async () => {
    page = await browser.newPage();
    problems = [];
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('console', (message) => {
      // A live part asking again once signed out is refused (401): not a fault of the page.
      if (message.type() === 'error' && !/status of 40[14]/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  });

  afterEach(async () => {
    await page.close();
    expect(problems).toEqual([]);
  });

  async function signIn(): Promise<void> {
    await page.goto(`${base}/`);
    if (await page.getByLabel('Token').count()) {
      await page.getByLabel('Token').fill(TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  }

  /** axe-core's serious and critical violations on the page as it is, one line each. */
  async function axeViolations(): Promise<string[]> {
    await page.evaluate(AXE);
    // Written as text: it runs in the page, whose types (the DOM) this program does not compile against.
    const violations = await page.evaluate<Array<{ id: string; impact: string; nodes: string[] }>>(`(async () => {
      const result = await window.axe.run(document);
      if (result.passes.length === 0) throw new Error('axe-core checked nothing');
      return result.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        nodes: violation.nodes.map((node) => node.target.join(' ')).slice(0, 3),
      }));
    })()`);
    return violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} (${violation.impact}) at ${violation.nodes.join(', ')}`);
  }

  /** Whether the page itself scrolls sideways (a table may, in its own wrapper). */
  const scrollsSideways = () => page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth + 1');

  it('shows every page at 1280 and 390 px, light and dark, with no serious axe-core violation and no sideways scroll', async () => {
    await signIn();
    const pages: Array<{ name: string; path: string; ready: () => Promise<void> }> = [
      { name: 'overview', path: '/', ready: () => page.locator('#runs-per-day canvas').first().waitFor() },
      { name: 'jobs', path: '/jobs', ready: () => page.getByRole('table', { name: 'Jobs' }).waitFor() },
      { name: 'job', path: `/jobs/${jobIds.Stars}`, ready: () => page.getByRole('heading', { name: 'Job Stars' }).waitFor() },
      { name: 'new-job', path: '/jobs/new', ready: () => page.getByLabel('Schedule').waitFor() },
      { name: 'runs', path: '/runs', ready: () => page.getByRole('table', { name: /^Runs, newest first/ }).waitFor() },
      { name: 'run', path: `/runs/${runId}`, ready: () => page.getByRole('heading', { name: /^Run / }).waitFor() },
      {
        name: 'run-retry',
        path: `/runs/${runId}/retry`,
        ready: () => page.getByRole('heading', { name: /^Run this job again now\?|^Retry/ }).waitFor(),
      },
      { name: 'webhooks', path: '/webhooks', ready: () => page.getByRole('table', { name: 'Routes and subscriptions' }).waitFor() },
      {
        name: 'job-remove',
        path: `/jobs/${jobIds.News}/remove`,
        ready: () => page.getByRole('heading', { name: /^Remove job/ }).waitFor(),
      },
    ];
    const found: string[] = [];
    for (const view of VIEWS) {
      await page.setViewportSize({ width: view.width, height: view.height });
      await page.emulateMedia({ colorScheme: view.scheme });
      for (const each of pages) {
        await page.goto(`${base}${each.path}`);
        await each.ready();
        const where = `${each.name} at ${view.width} px, ${view.scheme}`;
        for (const violation of await axeViolations()) found.push(`${where}: ${violation}`);
        if (await scrollsSideways()) found.push(`${where}: the page scrolls sideways`);
        // The docs show the overview light and dark and on a phone, the webhooks page once.
        const shown =
          each.name === 'overview' ? view.width > 500 || view.scheme === 'light' : each.name === 'webhooks' && view === VIEWS[0];
        if (!shown) continue;
        const name = `dashboard-${each.name}${view.width < 500 ? '-phone' : ''}${view.scheme === 'dark' ? '-dark' : ''}`;
        // On a phone, what the screen shows first.
        if (view.width < 500) await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) });
        else await screenshot(page, name);
      }
    }
    // The sign-in page too, signed out.
    await browser.context.clearCookies();
    for (const view of VIEWS) {
      await page.setViewportSize({ width: view.width, height: view.height });
      await page.emulateMedia({ colorScheme: view.scheme });
      await page.goto(`${base}/`);
      await page.getByLabel('Token').waitFor();
      for (const violation of await axeViolations()) found.push(`sign-in at ${view.width} px, ${view.scheme}: ${violation}`);
    }
    expect(found).toEqual([]);
  }, 240_000);

  it('counts jobs by state and last status and runs by status, each a link to the list it counts, and draws the charts', async () => {
    await signIn();
    const paused = page.getByRole('list', { name: 'Jobs by state' }).getByRole('link', { name: '1 paused' });
    await paused.click();
    await page.waitForURL(/\/jobs\?state=paused$/);
    const jobs = page.getByRole('table', { name: 'Jobs' });
    await jobs.getByRole('link', { name: 'Plants', exact: true }).waitFor();
    expect(await jobs.getByRole('row').count()).toBe(2);

    await page.goto(`${base}/`);
    await page.getByRole('list', { name: 'Jobs by last status' }).getByRole('link', { name: '1 ok' }).click();
    await page.waitForURL(/\/jobs\?status=ok$/);
    await page.getByRole('table', { name: 'Jobs' }).getByRole('link', { name: 'News', exact: true }).waitFor();
    await page.goto(`${base}/`);
    await page.getByRole('list', { name: 'Jobs by last status' }).getByRole('link', { name: '2 never ran' }).click();
    await page.waitForURL(/\/jobs\?status=never$/);

    await page.goto(`${base}/`);
    // 20 ok seeded runs of Stars and 8 of github within 24 hours, the run of News and the two events.
    const runs = page.getByRole('list', { name: 'Runs in the last 24 hours' });
    expect(await runs.getByRole('link', { name: /^\d+ ok$/ }).getAttribute('href')).toBe('/runs?status=ok');
    expect(await runs.getByRole('link', { name: /^\d+ ok$/ }).textContent()).toBe('31 ok');
    await runs.getByRole('link', { name: '4 error' }).waitFor();

    for (const chart of ['runs-per-hour', 'runs-per-day', 'cost-per-day']) {
      const canvas = page.locator(`#${chart} canvas`).first();
      await canvas.waitFor();
      expect((await canvas.boundingBox())!.height).toBeGreaterThan(100);
    }
    const cost = page.getByRole('figure', { name: /Cost per day per model/ });
    await cost.getByText(/anthropic\/claude-sonnet-4: \$/).waitFor();
    await cost.getByText(/openai\/gpt-5-mini: \$/).waitFor();
    const durations = page.getByRole('table', { name: /Duration of the finished runs/ });
    await durations.getByRole('row', { name: /Stars cron \d+/ }).waitFor();
    await page
      .getByRole('table', { name: /gateway serving this home/ })
      .getByRole('row', { name: /built-in/ })
      .waitFor();
  });

  it('weighs under 300 KB in all, chart library included', async () => {
    await signIn();
    const sizes = new Map<string, number>();
    page.on('response', (response) => {
      void response
        .body()
        .then((body) => sizes.set(response.url(), body.length))
        .catch(() => undefined);
    });
    await page.goto(`${base}/`, { waitUntil: 'load' });
    await page.locator('#runs-per-day canvas').first().waitFor();
    expect(await eventually(async () => sizes.has(`${base}/assets/uplot.js`))).toBe(true);
    const total = [...sizes.values()].reduce((sum, size) => sum + size, 0);
    expect([...sizes.keys()].map((url) => url.replace(base, '')).sort()).toEqual(
      expect.arrayContaining([
        '/',
        '/assets/charts.js',
        '/assets/dashboard.css',
        '/assets/dashboard.js',
        '/assets/uplot.css',
        '/assets/uplot.js',
      ]),
    );
    expect(total).toBeLessThan(300 * 1024);
  });

  it('focuses search with / and goes to jobs, runs and webhooks with g j, g r and g w, but not while typing', async () => {
    await signIn();
    await page.keyboard.press('/');
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('search');
    await page.keyboard.type('gw');
    expect(page.url()).toBe(`${base}/`);
    await page.keyboard.press('Escape');

    await page.keyboard.press('g');
    await page.keyboard.press('w');
    await page.waitForURL(`${base}/webhooks`);
    await page.keyboard.press('g');
    await page.keyboard.press('j');
    await page.waitForURL(`${base}/jobs`);
    await page.keyboard.press('/');
    expect(await page.evaluate<string | null | undefined>("document.activeElement?.getAttribute('name')")).toBe('q');
    await page.keyboard.press('Escape');
    await page.keyboard.press('g');
    await page.keyboard.press('r');
    await page.waitForURL(`${base}/runs`);

    // A page without a search field opens the jobs list's.
    await page.goto(`${base}/jobs/${jobIds.Stars}`);
    await page.keyboard.press('/');
    await page.waitForURL(`${base}/jobs#search`);
    expect(await eventually(async () => (await page.evaluate<string | undefined>('document.activeElement?.id')) === 'search')).toBe(true);
  });

  it('keeps Sign out in the menu on the right of the header', async () => {
    await signIn();
    const signOut = page.getByRole('button', { name: 'Sign out' });
    expect(await signOut.isVisible()).toBe(false);
    await page.getByText('Menu', { exact: true }).click();
    await signOut.waitFor();
    const header = (await page.locator('header.top').boundingBox())!;
    const button = (await signOut.boundingBox())!;
    expect(button.x + button.width).toBeGreaterThan(header.x + header.width * 0.6);
    await signOut.click();
    await page.getByLabel('Token').waitFor();
  });

  it('makes a subscription showing its secret once, sends it a test event whose outcome shows, and removes it once confirmed', async () => {
    await signIn();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Name').fill('deploys');
    await page.getByLabel('Prompt').fill('Say what was deployed');
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByRole('heading', { name: 'Subscription deploys created' }).waitFor();
    const secret = (await page.locator('#secret').textContent())!.trim();
    expect(secret.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    await screenshot(page, 'dashboard-subscription-created');

    const listed = JSON.parse((await runAgent(['webhook', 'list', '--json'], { home })).stdout) as Array<Record<string, unknown>>;
    expect(listed.find((route) => route.name === 'deploys')).toMatchObject({ source: 'subscription' });
    expect(JSON.stringify(listed)).not.toContain(secret);

    await page.getByRole('link', { name: 'Back to the webhooks' }).click();
    expect(await page.content()).not.toContain(secret);
    const row = page.getByRole('table', { name: 'Routes and subscriptions' }).getByRole('row', { name: /^deploys/ });
    await row.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'The test event was accepted (202)' }).waitFor();
    const loaded = page.url();
    const tested = page.getByRole('region', { name: 'Test event' });
    // The event's run starts a command agent in the sandbox: on a loaded machine that alone has
    // taken over 20 s.
    await tested.getByText('delivered', { exact: true }).waitFor({ timeout: 60_000 });
    expect(page.url()).toBe(loaded);

    await page.goto(`${base}/webhooks`);
    await row.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('heading', { name: 'Remove subscription deploys?' }).waitFor();
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await row.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed webhook subscription deploys.' }).waitFor();
    const after = JSON.parse((await runAgent(['webhook', 'list', '--json'], { home })).stdout) as Array<{ name: string }>;
    expect(after.map((route) => route.name)).not.toContain('deploys');
  }, 120_000);

  it('refuses a subscription made without the CSRF token of the session', async () => {
    await signIn();
    const cookie = (await browser.context.cookies(base)).map((each) => `${each.name}=${each.value}`).join('; ');
    const forged = await fetch(`${base}/webhooks`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ name: 'forged' }),
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    const removal = await fetch(`${base}/webhooks/github/remove`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ confirm: 'yes' }),
      redirect: 'manual',
    });
    expect(removal.status).toBe(403);
    const listed = JSON.parse((await runAgent(['webhook', 'list', '--json'], { home })).stdout) as Array<{ name: string }>;
    expect(listed.map((route) => route.name)).not.toContain('forged');
  });
});
