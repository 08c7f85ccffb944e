import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { Repeat } from '../../../src/adapters/dashboard/liveChanges.js';
import { cursorOf, positionOfCursor, timeOfFilter } from '../../../src/adapters/dashboard/runFilters.js';
import { aRun } from '../../contract/RunLedger.contract.js';
import { dashboardHarness, signInTo } from '../../support/dashboardHarness.js';

/** Timers that fire only when the test says so. */
function manualRepeat() {
  const ticks = new Set<() => void>();
  const repeat: Repeat = (_ms, tick) => {
    ticks.add(tick);
    return () => ticks.delete(tick);
  };
  return { repeat, fire: () => [...ticks].forEach((tick) => tick()) };
}

/** The ids of the runs a list page links to, in order. */
const linkedRuns = (text: string) => [...text.matchAll(/href="\/runs\/([^"/?]+)"/g)].map((match) => decodeURIComponent(match[1]!));
const nextHref = (text: string) => /<a rel="next" href="([^"]+)"/.exec(text)?.[1]?.replaceAll('&amp;', '&') ?? null;

describe("the dashboard's run list", () => {
  it('pages 120 runs of cron and webhook together, 50 a page, newest first, each once, by an opaque cursor', async () => {
    const { h, app } = dashboardHarness();
    for (let n = 0; n < 120; n += 1) {
      await h.ledger.save(
        n % 4 === 0
          ? aRun(n, { id: `event-${n}`, kind: 'webhook', subject: 'github', name: 'github', event: 'push', delivery_id: `d-${n}` })
          : aRun(n, { subject: `job${n % 3}` }),
      );
    }
    const { cookie } = await signInTo(app, '/');

    const seen: string[] = [];
    let href: string | null = '/runs';
    const sizes: number[] = [];
    while (href !== null) {
      const page = await request(app).get(href).set('cookie', cookie);
      expect(page.status).toBe(200);
      const ids = linkedRuns(page.text);
      sizes.push(ids.length);
      seen.push(...ids);
      href = nextHref(page.text);
    }

    expect(sizes).toEqual([50, 50, 20]);
    expect(new Set(seen).size).toBe(120);
    expect(seen[0]).toBe('run-119');
    expect(seen.at(-1)).toBe('event-0');
  });

  it('filters by job, route, status, time range and text, and keeps the filters on the next page', async () => {
    const { h, app } = dashboardHarness();
    for (let n = 0; n < 60; n += 1)
      await h.ledger.save(aRun(n, { status: n % 2 === 0 ? 'ok' : 'error', error: n % 2 ? `quota ${n}` : null }));
    await h.ledger.save(aRun(61, { id: 'event-61', kind: 'webhook', subject: 'github', name: 'github' }));
    const { cookie } = await signInTo(app, '/');
    const get = async (query: string) => (await request(app).get(`/runs?${query}`).set('cookie', cookie)).text;

    expect(linkedRuns(await get('route=github'))).toEqual(['event-61']);
    expect(linkedRuns(await get('job=job1&status=error&q=QUOTA 5'))).toEqual(['run-59', 'run-57', 'run-55', 'run-53', 'run-51', 'run-5']);
    expect(linkedRuns(await get('from=2026-06-20T08:10&to=2026-06-20T08:13'))).toEqual(['run-12', 'run-11', 'run-10']);
    const errors = await get('status=error&kind=cron');
    expect(linkedRuns(errors)).toHaveLength(30);
    expect(errors).toContain('<span class="badge status-error">error</span>');
    expect(errors).toContain('<option value="error" selected>error</option>');
    expect(nextHref(await get('status=ok'))).toBeNull();
    const first = await get('job=job1');
    expect(nextHref(first)).toMatch(/^\/runs\?job=job1&cursor=/);
    expect(linkedRuns(await get(nextHref(first)!.slice('/runs?'.length)))).toEqual(Array.from({ length: 10 }, (_, n) => `run-${9 - n}`));
  });

  it('says in one sentence what is wrong with a filter, and lists nothing', async () => {
    const { app } = dashboardHarness();
    const { cookie } = await signInTo(app, '/');
    const bad = await request(app).get('/runs?status=great').set('cookie', cookie);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('Status must be one of running, ok, error');
    const cursor = await request(app).get('/runs?cursor=xyz').set('cookie', cookie);
    expect(cursor.text).toContain('its cursor is unknown');
    expect((await request(app).get('/runs?from=yesterday').set('cookie', cookie)).text).toContain('From is not a time');
  });

  it('reads a time as a wall clock of the configured zone or as an instant, and a cursor only as it made it', () => {
    expect(timeOfFilter('2026-06-20T08:00', 'Europe/Paris')!.toISOString()).toBe('2026-06-20T06:00:00.000Z');
    expect(timeOfFilter('2026-06-20', 'UTC')!.toISOString()).toBe('2026-06-20T00:00:00.000Z');
    expect(timeOfFilter('2026-06-20T08:00:00+02:00', 'UTC')!.toISOString()).toBe('2026-06-20T06:00:00.000Z');
    expect(timeOfFilter('2026-13-01', 'UTC')).toBeNull();
    const position = { started_at: '2026-06-20T08:00:00.000Z', id: 'ünï/run' };
    expect(positionOfCursor(cursorOf(position))).toEqual(position);
    expect(cursorOf(position)).not.toContain('run');
    expect(positionOfCursor('bm90IGpzb24')).toBeNull();
  });
});

describe("a run's page and its actions", () => {
  it('asks to confirm a retry, refuses it without the CSRF token, then runs the job again and records who asked', async () => {
    const { h, app } = dashboardHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Count', name: 'Counter' });
    const first = await h.runJobNow.execute({ job: job.id });
    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
    expect(first.report.outcome.status).toBe('ok');
    const { cookie, csrf } = await signInTo(app, `/runs/${run!.id}`);

    const shown = await request(app).get(`/runs/${run!.id}`).set('cookie', cookie);
    expect(shown.text).toContain(`action="/runs/${run!.id}/retry"`);
    expect(shown.text).not.toContain(`action="/runs/${run!.id}/cancel"`);
    const confirm = await request(app).get(`/runs/${run!.id}/retry`).set('cookie', cookie);
    expect(confirm.text).toContain('Run this job again now?');
    const forged = await request(app).post(`/runs/${run!.id}/retry`).set('cookie', cookie).type('form').send({ confirm: 'yes' });
    expect(forged.status).toBe(403);
    const unconfirmed = await request(app).post(`/runs/${run!.id}/retry`).set('cookie', cookie).type('form').send({ csrf });
    expect(unconfirmed.headers.location).toBe(`/runs/${run!.id}/retry`);
    h.clock.advance(60_000);

    const done = await request(app).post(`/runs/${run!.id}/retry`).set('cookie', cookie).type('form').send({ csrf, confirm: 'yes' });

    expect(done.status).toBe(303);
    expect(done.headers.location).toMatch(new RegExp(`^/runs\\?job=${job.id}&done=`));
    const runs = await waitFor(async () => {
      const listed = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 5 });
      return listed.length === 2 && listed[0]!.status !== 'running' ? listed : null;
    });
    expect(runs[0]).toMatchObject({ requested_by: 'dashboard', rerun_of: run!.id, status: 'ok' });
    const again = await request(app).get(`/runs/${runs[0]!.id}`).set('cookie', cookie);
    expect(again.text).toContain('<dt>Asked for by</dt><dd>dashboard</dd>');
  });

  it('delivers a recorded answer again once confirmed, and the ledger says the dashboard asked', async () => {
    const { h, app } = dashboardHarness();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Count', name: 'Counter', deliver: 'telegram:-100123' });
    await h.runJobNow.execute({ job: job.id });
    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
    const sentBefore = h.channel.sent.length;
    const { cookie, csrf } = await signInTo(app, `/runs/${run!.id}`);
    expect((await request(app).get(`/runs/${run!.id}/redeliver`).set('cookie', cookie)).text).toContain('Deliver this answer again?');

    const done = await request(app).post(`/runs/${run!.id}/redeliver`).set('cookie', cookie).type('form').send({ csrf, confirm: 'yes' });

    expect(decodeURIComponent(done.headers.location!)).toContain('The answer was delivered again (ok).');
    expect(h.channel.sent.length).toBe(sentBefore + 1);
    expect(await h.ledger.get(run!.id)).toMatchObject({ redelivered_by: 'dashboard', redelivered_at: expect.any(String) });
    const page = await request(app).get(`/runs/${run!.id}`).set('cookie', cookie);
    expect(page.text).toContain('(by dashboard)');
  });

  it('says why a run that ended cannot be cancelled, on the confirm page and when posted', async () => {
    const { h, app } = dashboardHarness();
    await h.ledger.save(aRun(1, { started_at: h.clock.now().toISOString() }));
    const { cookie, csrf } = await signInTo(app, '/runs/run-1');
    const confirm = await request(app).get('/runs/run-1/cancel').set('cookie', cookie);
    expect(confirm.status).toBe(409);
    expect(confirm.text).toContain('is not running any more (it is ok), so there is nothing to cancel.');
    const posted = await request(app).post('/runs/run-1/cancel').set('cookie', cookie).type('form').send({ csrf, confirm: 'yes' });
    expect(decodeURIComponent(posted.headers.location!)).toContain('nothing to cancel');
    expect((await request(app).get('/runs/nope/cancel').set('cookie', cookie)).status).toBe(404);
  });
});

/** Polls `check` until it gives a value (not null), for at most 5 s. */
async function waitFor<T>(check: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error('waited 5 s in vain');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An SSE stream of `path` on `port`: its events as they come. */
function openStream(port: number, path: string, headers: Record<string, string>) {
  const events: Array<{ id: string; event: string; data: string }> = [];
  let text = '';
  let response: IncomingMessage | null = null;
  const req = httpRequest({ host: '127.0.0.1', port, path, headers });
  const opened = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', (res) => {
      response = res;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const field = (name: string) =>
            block
              .split('\n')
              .find((line) => line.startsWith(`${name}:`))
              ?.slice(name.length + 1)
              .trim();
          if (field('event')) events.push({ id: field('id') ?? '', event: field('event')!, data: field('data') ?? '' });
        }
      });
      resolve(res);
    });
    req.on('error', reject);
  });
  req.end();
  return { events, opened, close: () => (response?.destroy(), req.destroy()) };
}

describe('the live stream (/events)', () => {
  it('says hello with an id, names what changed as it changes, and tells a page that comes back what it missed', async () => {
    const timers = manualRepeat();
    const { h, app } = dashboardHarness(undefined, { live: { repeat: timers.repeat, maxStreams: 2 } });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as AddressInfo).port;
    const { cookie } = await signInTo(app, '/');
    try {
      const stream = openStream(port, '/events', { cookie, accept: 'text/event-stream' });
      const response = await stream.opened;
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      const hello = await waitFor(async () => stream.events.find((event) => event.event === 'hello') ?? null);
      expect(hello.id).toMatch(/^\d+$/);

      await h.ledger.save(aRun(1, { started_at: h.clock.now().toISOString(), status: 'running', finished_at: null }));
      h.clock.advance(10);
      timers.fire();
      const change = await waitFor(async () => stream.events.find((event) => event.event === 'change') ?? null);
      expect(JSON.parse(change.data)).toEqual({ topics: ['runs', 'run:run-1'] });
      stream.close();

      await h.ledger.save(aRun(1, { started_at: h.clock.now().toISOString(), status: 'ok' }));
      const back = openStream(port, '/events', { cookie, 'last-event-id': change.id });
      await back.opened;
      const missed = await waitFor(async () => back.events[0] ?? null);
      expect(missed.event).toBe('change');
      expect(JSON.parse(missed.data).topics).toEqual(expect.arrayContaining(['runs', 'run:run-1', 'jobs']));
      expect(Number(missed.id)).toBeGreaterThan(Number(change.id));

      const second = openStream(port, '/events', { cookie });
      expect((await second.opened).statusCode).toBe(200);
      const third = openStream(port, '/events', { cookie });
      const refused = await third.opened;
      expect(refused.statusCode).toBe(503);
      for (const each of [back, second, third]) each.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers a stream only to a signed-in page', async () => {
    const { app } = dashboardHarness();
    const refused = await request(app).get('/events').set('accept', 'text/event-stream');
    expect(refused.status).toBe(401);
  });
});
