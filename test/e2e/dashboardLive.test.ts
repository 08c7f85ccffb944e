import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeInBrowser, launchBrowser, type TestBrowser } from '../support/browser.js';
import { freePort } from '../support/freePort.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { createJob, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil } from './agentCli.js';

interface StreamEvent {
  id: string;
  event: string;
  topics: string[];
}

/**
 * The first event of the dashboard's live stream that `wanted` accepts (within 15 s), read from
 * `GET /events` with `headers`; the stream is closed after it.
 */
async function firstEvent(
  base: string,
  headers: Record<string, string>,
  wanted: (event: StreamEvent) => boolean,
  onFirst?: () => Promise<unknown>,
): Promise<StreamEvent> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 15_000);
  try {
    const response = await fetch(`${base}/events`, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before the event came:\n${text}`);
      text += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, end).split('\n');
        text = text.slice(end + 2);
        const field = (name: string) => block.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
        const event = field('event');
        if (!event) continue;
        const parsed = { id: field('id') ?? '', event, topics: (JSON.parse(field('data') ?? '{}') as { topics?: string[] }).topics ?? [] };
        if (wanted(parsed)) return parsed;
        // Once the stream said hello, what is to be heard of is done (and the stream read on meanwhile).
        if (onFirst) void onFirst().catch((error: unknown) => abort.abort(error));
        onFirst = undefined;
      }
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/**
 * The dashboard's live stream across a restart of the built gateway: a page that comes back with
 * the id of the last event it saw (Last-Event-ID) hears of the run that ran while the gateway was
 * stopped, and a page left open in a browser shows that run without a reload.
 */
describeInBrowser('the live dashboard across a gateway restart', () => {
  let home: string;
  let gateway: ChildProcess | null = null;
  let browser: TestBrowser;
  let base: string;

  const start = async () => (gateway = (await startGatewayUntil(home, 'dashboard listening on', { withinMs: 20_000 })).gateway);
  const stop = async () => {
    // A gateway started within a test is killed when the test ends (testProcesses): it may be gone already.
    if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    gateway = null;
  };

  beforeAll(async () => {
    requireBuiltAgent();
    home = await makeAgentHome();
    const port = await freePort();
    await appendFile(join(home, 'config.yaml'), ['dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'));
    base = `http://127.0.0.1:${port}`;
    browser = await launchBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stop();
    await removeAgentHome(home);
  });

  it('resumes with Last-Event-ID after a restart and says what changed meanwhile; an open page shows it without a reload', async () => {
    const id = await createJob(home, ['every 1d', 'Count the sheep', '--name', 'Sheep', '--deliver', 'local']);
    await start();
    const page = await browser.newPage();
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });
    await page.goto(`${base}/runs?job=${id}`);
    await page.getByText('No run matches.').waitFor();
    const hello = await firstEvent(base, {}, (event) => event.event === 'hello');
    expect(hello.id).toMatch(/^\d+$/);

    await stop();
    expect(await runAgent(['cron', 'run', id, '--no-tick'], { home })).toMatchObject({ code: 0 });
    const [run] = JSON.parse((await runAgent(['cron', 'runs', id, '--json', '--no-tick'], { home })).stdout) as Array<{ id: string }>;
    await start();

    const missed = await firstEvent(base, { 'last-event-id': hello.id }, () => true);
    expect(missed.event).toBe('change');
    expect(missed.topics).toEqual(expect.arrayContaining(['runs', `run:${run!.id}`]));
    expect(Number(missed.id)).toBeGreaterThan(Number(hello.id));

    await page.getByRole('link', { name: `Details of run ${run!.id}` }).waitFor({ timeout: 20_000 });
    expect(navigations).toBe(1);
    await page.close();
    await stop();
  }, 120_000);
});

/** The run list and the live stream of a gateway whose stores are in PostgreSQL. */
describe('the live dashboard on PostgreSQL', () => {
  let home: string;
  let database: ScratchDatabase;
  let gateway: ChildProcess | null = null;

  beforeAll(async () => {
    requireBuiltAgent();
    database = await scratchDatabase();
    await (await database.open()).close();
    home = await makeAgentHome();
  });

  afterAll(async () => {
    if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    await database?.drop();
    await removeAgentHome(home);
  });

  it('lists a run of the database in the run list, and tells a listening page of a run made by another process', async () => {
    const env = { AGENT_DATABASE_URL: database.url };
    const port = await freePort();
    await appendFile(join(home, 'config.yaml'), ['dashboard:', '  enabled: true', `  port: ${port}`, ''].join('\n'));
    const base = `http://127.0.0.1:${port}`;
    const created = await runAgent(
      ['cron', 'create', 'every 1d', 'Count the stars', '--name', 'Stars', '--deliver', 'local', '--no-tick'],
      {
        home,
        env,
      },
    );
    const id = /^Created job ([0-9a-f]{12}) /.exec(created.stdout)![1]!;
    gateway = (await startGatewayUntil(home, 'dashboard listening on', { env, withinMs: 20_000 })).gateway;

    const heard = await firstEvent(
      base,
      {},
      (event) => event.topics.includes('runs'),
      async () => expect(await runAgent(['cron', 'run', id, '--no-tick'], { home, env })).toMatchObject({ code: 0 }),
    );
    const [run] = JSON.parse((await runAgent(['cron', 'runs', id, '--json', '--no-tick'], { home, env })).stdout) as Array<{ id: string }>;
    expect(heard.topics).toContain(`run:${run!.id}`);

    const list = await (await fetch(`${base}/runs?job=${id}&status=ok&q=stars`)).text();
    expect(list).toContain(`Details<span class="muted"> of run ${run!.id}</span>`);
    const none = await (await fetch(`${base}/runs?job=${id}&status=error`)).text();
    expect(none).toContain('No run matches.');
  }, 60_000);
});
