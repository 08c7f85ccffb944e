import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describeInBrowser, launchBrowser, screenshot, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/freePort.js';
import { createJob, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil } from './agentCli.js';
import { webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';

const TOKEN = 'browser-dashboard-token';
const SECRET = 'browser-webhook-secret';
/** What a model might answer when a page it read told it to: shown as text, it runs nothing. */
const INJECTION = '<img src=x onerror=alert(1)>';

/**
 * The dashboard of the built gateway, driven through a real browser by role and label, as a
 * user meets it. The screenshots are the ones docs/dashboard.md shows.
 */
describeInBrowser('the dashboard in a browser', () => {
  let home: string;
  let gateway: ChildProcess;
  let base: string;
  let webhookPort: number;
  let browser: TestBrowser;
  let page: Page;
  let dialogs: string[];
  let navigations: number;

  beforeAll(async () => {
    requireBuiltAgent();
    home = await makeAgentHome();
    const port = await freePort();
    webhookPort = await freePort();
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
    await createJob(home, ['every 2h', INJECTION, '--name', 'Injected']);
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { env: { AGENT_DASHBOARD_TOKEN: TOKEN }, withinMs: 20_000 }))
      .gateway;
    base = `http://127.0.0.1:${port}`;
    browser = await launchBrowser();
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
    // Each test signs in afresh.
    await browser.context.clearCookies();
    page = await browser.newPage();
    dialogs = [];
    navigations = 0;
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });
  });

  afterEach(async () => {
    await page.close();
    expect(dialogs).toEqual([]);
  });

  async function signIn(): Promise<void> {
    await page.goto(`${base}/`);
    await page.getByLabel('Token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }

  async function openJob(name: string): Promise<void> {
    await page.goto(`${base}/jobs`);
    await page.getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { name: `Job ${name}` }).waitFor();
  }

  it('refuses a wrong token, then signs in and lists the jobs made on the command line', async () => {
    await page.goto(`${base}/`);
    await screenshot(page, 'dashboard-sign-in');
    await page.getByLabel('Token').fill('not the token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'That token is not the dashboard token' }).waitFor();

    await signIn();
    await page.getByRole('link', { name: 'Jobs' }).first().click();
    const table = page.getByRole('table');
    await table.getByRole('link', { name: 'Stars', exact: true }).waitFor();
    await page.getByLabel('Search').fill('sta');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=sta/);
    expect(await page.getByRole('table').getByRole('row').count()).toBe(2);
    await screenshot(page, 'dashboard-jobs');
  });

  it('pauses with a reason that agent cron list --json shows, and resumes', async () => {
    await signIn();
    await openJob('Stars');
    await page.getByLabel('Reason').fill('Clouds all week');
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('status').filter({ hasText: 'Paused: Clouds all week.' }).waitFor();

    const listed = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<Record<string, unknown>>;
    expect(listed.find((job) => job.name === 'Stars')).toMatchObject({ state: 'paused', paused_reason: 'Clouds all week' });
    await screenshot(page, 'dashboard-job-paused');

    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('status').filter({ hasText: 'Resumed.' }).waitFor();
    const after = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<Record<string, unknown>>;
    expect(after.find((job) => job.name === 'Stars')).toMatchObject({ state: 'scheduled', paused_reason: null });
  });

  it('runs a job now and shows it running, then its answer, without a reload', async () => {
    await createJob(home, ['every 3h', 'Look up [sleep 2]', '--name', 'Slow']);
    await signIn();
    await openJob('Slow');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('status').filter({ hasText: 'The run started' }).waitFor();
    const loaded = navigations;

    await page.getByRole('heading', { name: /: running$/ }).waitFor({ timeout: 4000 });
    await page.getByText('Answer to: Look up [sleep 2]').first().waitFor({ timeout: 6000 });
    // The job's own fields follow the ledger too: no "running" left once the run ended.
    await page.locator('dt:text-is("State") + dd:text-is("scheduled")').waitFor({ timeout: 4000 });
    await page.locator('dt:text-is("Last status") + dd:text-is("ok")').waitFor({ timeout: 4000 });
    expect(navigations).toBe(loaded);
    await screenshot(page, 'dashboard-job-run');

    await page
      .getByRole('link', { name: /^Details/ })
      .first()
      .click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    await page.getByRole('table', { name: 'Delivery per target' }).or(page.getByText('Nothing was delivered.')).waitFor();
    await screenshot(page, 'dashboard-run');
  });

  it('shows an answer that is markup as text, and runs nothing of it', async () => {
    const id = (
      JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<{ id: string; name: string }>
    ).find((job) => job.name === 'Injected')!.id;
    expect((await runAgent(['cron', 'run', id], { home })).code).toBe(0);
    await signIn();
    await openJob('Injected');

    await page.getByText(`Answer to: ${INJECTION}`).first().waitFor();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
  });

  it("answers a new job with a bad schedule with the command line's sentence, and removes a job only once confirmed", async () => {
    await signIn();
    await page.getByRole('link', { name: 'New job' }).first().click();
    await page.getByLabel('Schedule').fill('every blue moon');
    await page.getByLabel('Prompt').fill('Water the plants');
    await page.getByLabel('Name').fill('Plants');
    await page.getByLabel('Deliver').fill('local');
    await page.getByLabel('Skills').fill('');
    await page.getByRole('button', { name: 'Create job' }).click();
    const cli = await runAgent(['cron', 'create', 'every blue moon', 'Water the plants', '--no-tick'], { home });
    const sentence = cli.stderr.trim().replace(/^error: /, '');
    await page.getByRole('alert').filter({ hasText: sentence }).waitFor();
    await screenshot(page, 'dashboard-new-job-refused');

    await page.getByLabel('Schedule').fill('every 1d');
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.getByRole('heading', { name: 'Job Plants' }).waitFor();
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('heading', { name: 'Remove job Plants?' }).waitFor();
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('heading', { name: 'Job Plants' }).waitFor();
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed job Plants.' }).waitFor();
    const listed = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<{ name: string }>;
    expect(listed.map((job) => job.name)).not.toContain('Plants');
  });

  it("shows a webhook event's run with its outcome", async () => {
    expect(
      (
        await postPullRequestEvent(webhookPort, SECRET, 'delivery-browser-1', {
          action: 'opened',
          number: 7,
          pull_request: { title: 'Fix' },
        })
      ).status,
    ).toBe(202);
    await signIn();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const events = page.getByRole('table', { name: 'Recent events of github' });
    await events
      .getByRole('row', { name: /delivery-browser-1.*delivered/ })
      .waitFor({ timeout: 10_000 })
      .catch(async () => {
        // The event ran after the page loaded: the page shows it on the next load.
        await page.reload();
        await events.getByRole('row', { name: /delivery-browser-1.*delivered/ }).waitFor({ timeout: 10_000 });
      });
  });

  it('refuses a change whose form carries no CSRF token', async () => {
    await signIn();
    const cookies = await browser.context.cookies(base);
    const cookie = cookies.map((each) => `${each.name}=${each.value}`).join('; ');
    const id = (
      JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<{ id: string; name: string }>
    ).find((job) => job.name === 'Stars')!.id;

    const forged = await fetch(`${base}/jobs/${id}/pause`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ reason: 'forged' }),
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    const listed = JSON.parse((await runAgent(['cron', 'list', '--json', '--no-tick'], { home })).stdout) as Array<Record<string, unknown>>;
    expect(listed.find((job) => job.id === id)).toMatchObject({ state: 'scheduled' });
  });
});
