import request from 'supertest';
import { AgentRunError } from '../../../src/application/ports/AgentRunner.js';
import type { DashboardDependencies } from '../../../src/adapters/dashboard/dashboardDependencies.js';
import { SCHEDULE_FORMS } from '../../../src/domain/Schedule.js';
import { DASHBOARD_TOKEN as TOKEN, dashboardHarness, signInTo } from '../../support/dashboardHarness.js';

type Deps = DashboardDependencies;

function dashboard(token: string | null = TOKEN, webhooks: Partial<Deps['webhooks']> = {}) {
  return dashboardHarness(token, { webhooks });
}

const signIn = signInTo;

describe('the dashboard', () => {
  it('asks for the token, says when it is wrong, and signs in with an HttpOnly, SameSite=Strict cookie', async () => {
    const { app } = dashboard();
    const first = await request(app).get('/');
    expect(first.text).toMatch(/<label for="token">Token<\/label>\s*<input id="token" name="token" type="password"/);
    expect(first.text).toContain('<button type="submit" class="primary">Sign in</button>');

    const wrong = await request(app).post('/sign-in').type('form').send({ token: 'guess' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That token is not the dashboard token; try again.');

    const { signedIn, cookie } = await signIn(app);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers['set-cookie']![0]).toMatch(/^agent_dashboard=[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/);
    const overview = await request(app).get('/').set('cookie', cookie);
    expect(overview.text).toContain('<h1>Overview</h1>');
  });

  it('serves every page with a strict Content-Security-Policy and its assets itself', async () => {
    const { app } = dashboard();
    const { cookie } = await signIn(app);
    const page = await request(app).get('/jobs').set('cookie', cookie);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'; script-src 'self'");
    expect(page.text).toContain('<script src="/assets/dashboard.js" defer></script>');
    expect((await request(app).get('/assets/dashboard.js')).status).toBe(200);
  });

  it('refuses a change without the session CSRF token', async () => {
    const { app, h } = dashboard();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    const { cookie } = await signIn(app);

    const forged = await request(app).post(`/jobs/${job.id}/pause`).set('cookie', cookie).type('form').send({ reason: 'x' });
    expect(forged.status).toBe(403);
    expect(forged.text).toMatch(/CSRF token is missing or wrong/);
    expect(h.repository.get(job.id)?.state).toBe('scheduled');
  });

  it('pauses with a reason and resumes through the CLI use cases, and the JSON API agrees with a Bearer token', async () => {
    const { app, h } = dashboard();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    const { cookie, csrf } = await signIn(app, `/jobs/${job.id}`);

    const paused = await request(app)
      .post(`/jobs/${job.id}/pause`)
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, reason: 'Server moves tonight' });
    expect(paused.status).toBe(303);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'paused', paused_reason: 'Server moves tonight' });
    const page = await request(app).get(paused.headers.location!).set('cookie', cookie);
    expect(page.text).toContain('Paused: Server moves tonight.');

    const api = await request(app).get(`/api/jobs/${job.id}`).set('authorization', `Bearer ${TOKEN}`);
    expect(api.body).toMatchObject({ state: 'paused', paused_reason: 'Server moves tonight' });
    expect((await request(app).get('/api/jobs').set('authorization', 'Bearer wrong')).status).toBe(401);
    const resumed = await request(app).post(`/api/jobs/${job.id}/resume`).set('authorization', `Bearer ${TOKEN}`);
    expect(resumed.body).toMatchObject({ state: 'scheduled', paused_reason: null });
  });

  it("answers a bad new job with the CLI's own sentence and keeps what was typed", async () => {
    const { app, h } = dashboard();
    const { cookie, csrf } = await signIn(app);
    const refused = await request(app)
      .post('/jobs')
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, schedule: 'every blue moon', prompt: 'Check the feeds', name: 'Feeds' });

    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/<p class="problem" role="alert">[^<]*every blue moon[^<]*<\/p>/);
    expect(refused.text).toContain('>Check the feeds</textarea>');
    expect((await h.listJobs.execute()).jobs).toEqual([]);
  });

  it("hints at every schedule form of the table in the new job form's schedule field", async () => {
    const { app } = dashboard();
    const { cookie } = await signIn(app);

    const form = await request(app).get('/jobs/new').set('cookie', cookie);
    const placeholder = /<input name="schedule"[^>]* placeholder="([^"]*)">/.exec(form.text)?.[1];

    expect(placeholder?.split(', ')).toEqual(SCHEDULE_FORMS.flatMap((each) => each.examples));
  });

  it('shows names, prompts and answers as text, never as markup', async () => {
    const { app, h } = dashboard();
    const job = await h.createJob.execute({
      schedule: 'every 1h',
      prompt: '<script>alert(1)</script>',
      name: '<img src=x onerror=alert(1)>',
    });
    h.agent.reply('<img src=x onerror=alert(1)>');
    await h.runJobNow.execute({ job: job.id });
    const { cookie } = await signIn(app);

    for (const path of ['/jobs', `/jobs/${job.id}`, '/']) {
      const page = await request(app).get(path).set('cookie', cookie);
      expect(page.text).not.toContain('<img src=x');
      expect(page.text).not.toContain('<script>alert');
      expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    }
  });

  it('removes a job only once confirmed', async () => {
    const { app, h } = dashboard();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    const { cookie, csrf } = await signIn(app, `/jobs/${job.id}/remove`);

    const asked = await request(app).get(`/jobs/${job.id}/remove`).set('cookie', cookie);
    expect(asked.text).toContain('<h1>Remove job Digest?</h1>');
    await request(app).post(`/jobs/${job.id}/remove`).set('cookie', cookie).type('form').send({ csrf });
    expect(h.repository.get(job.id)).toBeDefined();
    const removed = await request(app).post(`/jobs/${job.id}/remove`).set('cookie', cookie).type('form').send({ csrf, confirm: 'yes' });
    expect(removed.headers.location).toBe(`/jobs?done=${encodeURIComponent('Removed job Digest.')}`);
    expect(h.repository.get(job.id)).toBeUndefined();
  });

  it('needs no sign-in without a token (a loopback listener), and still a CSRF token for changes', async () => {
    const { app } = dashboard(null);
    const page = await request(app).get('/jobs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Jobs</h1>');
    expect(page.text).not.toContain('Sign out');
    const cookie = page.headers['set-cookie']![0]!.split(';')[0]!;
    expect((await request(app).post('/jobs').set('cookie', cookie).type('form').send({ schedule: 'every 1h', prompt: 'x' })).status).toBe(
      403,
    );
  });
});

describe('editing a job on the dashboard', () => {
  it('changes only the fields that were changed', async () => {
    const { app, h } = dashboard();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check the feeds', name: 'Feeds', skills: ['rss'] });
    const { cookie, csrf } = await signIn(app, `/jobs/${job.id}/edit`);
    // A schedule given again would count its next run from now.
    h.clock.advance(600_000);

    const saved = await request(app)
      .post(`/jobs/${job.id}/edit`)
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, schedule: 'every 1h', prompt: 'Check all feeds', name: 'Feeds', deliver: job.deliver, skills: 'rss' });

    expect(saved.status).toBe(303);
    expect(h.repository.get(job.id)).toMatchObject({
      prompt: 'Check all feeds',
      next_run_at: job.next_run_at,
      skills: ['rss'],
      name: 'Feeds',
    });
  });

  it("takes a job's own time zone, shows its times in it, and gives it back to the configured zone when emptied", async () => {
    const { app, h } = dashboard();
    const { cookie, csrf } = await signIn(app);
    const created = await request(app)
      .post('/jobs')
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, schedule: '0 9 * * *', prompt: 'Morning brief', name: 'Brief', timezone: 'America/New_York' });
    expect(created.status).toBe(303);
    const job = h.repository.get('000000000001')!;
    // T0 is 08:00 UTC on 1 June: 04:00 in New York, so 09:00 there is 13:00 UTC the same day.
    expect(job).toMatchObject({ timezone: 'America/New_York', next_run_at: '2026-06-01T13:00:00Z' });

    const page = await request(app).get(`/jobs/${job.id}`).set('cookie', cookie);
    expect(page.text).toContain('<dt>Time zone</dt><dd>America/New_York</dd>');
    expect(page.text).toContain('<li>2026-06-01 09:00:00 (America/New_York)</li>');
    const form = await request(app).get(`/jobs/${job.id}/edit`).set('cookie', cookie);
    expect(form.text).toContain('<input name="timezone" type="text" value="America/New_York"');

    const refused = await request(app).post(`/jobs/${job.id}/edit`).set('cookie', cookie).type('form').send({
      csrf,
      schedule: '0 9 * * *',
      prompt: 'Morning brief',
      name: 'Brief',
      deliver: job.deliver,
      skills: '',
      timezone: 'Mars/Base',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/<p class="problem" role="alert">Unknown time zone &quot;Mars\/Base&quot;; use an IANA name/);

    await request(app)
      .post(`/jobs/${job.id}/edit`)
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, schedule: '0 9 * * *', prompt: 'Morning brief', name: 'Brief', deliver: job.deliver, skills: '', timezone: '' });
    expect(h.repository.get(job.id)).toMatchObject({ timezone: null, next_run_at: '2026-06-01T09:00:00Z' });
  });
});

describe("the dashboard's next runs", () => {
  it("shows a one-shot's time in the job table, the overview and /api/jobs/<id>, as agent status lists it", async () => {
    const { app, h } = dashboard();
    // T0 is 08:00 UTC: the one-shot fires at 08:30, the hourly job at 09:00.
    const once = await h.createJob.execute({ schedule: '30m', prompt: 'Stretch', name: 'Stretch' });
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Hourly' });
    const { cookie } = await signIn(app);

    const jobs = await request(app).get('/jobs').set('cookie', cookie);
    expect(jobs.text).toMatch(
      />Stretch<\/a><\/td><td>once in 30m<\/td><td><span class="badge status-scheduled">scheduled<\/span><\/td><td>2026-06-01 08:30:00<\/td>/,
    );
    const overview = await request(app).get('/').set('cookie', cookie);
    expect(overview.text).toMatch(
      /<td>2026-06-01 08:30:00<\/td><td><a href="\/jobs\/[0-9a-f]+">Stretch<\/a>[\s\S]*<td>2026-06-01 09:00:00<\/td><td><a href="\/jobs\/[0-9a-f]+">Hourly<\/a>/,
    );
    const api = await request(app).get(`/api/jobs/${once.id}`).set('authorization', `Bearer ${TOKEN}`);
    expect(api.body.next_runs).toEqual(['2026-06-01T08:30:00.000Z']);
  });

  it('shows none for a one-shot once it has run', async () => {
    const { app, h } = dashboard();
    const once = await h.createJob.execute({ schedule: '30m', prompt: 'Stretch', name: 'Stretch' });
    await h.runJobNow.execute({ job: once.id, force: true });

    const api = await request(app).get(`/api/jobs/${once.id}`).set('authorization', `Bearer ${TOKEN}`);
    expect(api.body).toMatchObject({ state: 'completed', next_runs: [] });
  });
});

describe('sending a test event from the dashboard', () => {
  const route = { name: 'payments', source: 'subscription', events: ['charge.failed'], deliver: 'log' } as unknown as Awaited<
    ReturnType<Deps['webhooks']['listing']>
  >['routes'][number];
  const listing = async () => ({ routes: [route], unusable: [], subscriptionProblems: [], storeProblem: null });

  async function sendTest(answer: { status: number; body: string }) {
    const { app } = dashboard(TOKEN, { listing, sendTest: async () => answer });
    const { cookie, csrf } = await signIn(app, '/webhooks');
    const sent = await request(app).post('/webhooks/payments/test').set('cookie', cookie).type('form').send({ csrf });
    expect(sent.status).toBe(303);
    return {
      location: decodeURIComponent(sent.headers.location!),
      page: (await request(app).get(sent.headers.location!).set('cookie', cookie)).text,
    };
  }

  it('says an event the route ignored for its kind was ignored, and why', async () => {
    const { location, page } = await sendTest({ status: 200, body: '{"status":"ignored","event":"test"}' });
    expect(location).toMatch(/^\/webhooks\?problem=/);
    expect(location).toContain(
      'The test event was ignored (200): the route takes only the events charge.failed, not "test", so nothing ran.',
    );
    expect(page).toContain('<p class="problem" role="alert">The test event was ignored (200)');
    expect(page).not.toContain('accepted');
  });

  it("says an event the route's filters did not match was ignored, and why", async () => {
    const { location } = await sendTest({ status: 200, body: '{"status":"ignored","reason":"filter","route":"payments"}' });
    expect(location).toContain("problem=The test event was ignored (200): the route's filters did not match it, so nothing ran.");
  });

  it('says an accepted event was accepted, and a refused one refused', async () => {
    expect(
      (await sendTest({ status: 202, body: '{"status":"accepted","route":"payments","event":"test","delivery_id":"d-1"}' })).location,
    ).toContain('done=The test event was accepted (202) as delivery d-1');
    expect((await sendTest({ status: 401, body: '{"error":"Invalid signature"}' })).location).toContain(
      'problem=The listener refused the test event (401): {"error":"Invalid signature"}',
    );
  });

  it('answers the same through the API', async () => {
    const { app } = dashboard(TOKEN, {
      listing,
      sendTest: async () => ({ status: 200, body: '{"status":"ignored","reason":"filter","route":"payments"}' }),
    });
    const sent = await request(app).post('/api/webhooks/payments/test').set('authorization', `Bearer ${TOKEN}`);
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ status: 200, outcome: 'ignored', said: expect.stringContaining('ignored') });
  });
});

describe("a job's page while it runs", () => {
  it('refreshes its state and last status with its runs, and once the run ended they are what the ledger says', async () => {
    const { app, h } = dashboard();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    let answer!: (text: string) => void;
    h.agent.reply(() => new Promise<string>((resolve) => (answer = resolve)));
    const started = await h.runJobNow.start({ job: job.id });
    const { cookie } = await signIn(app);

    const page = await request(app).get(`/jobs/${job.id}`).set('cookie', cookie);
    const live = /<div data-live="([^"]+)">/.exec(page.text)![1]!;
    expect(page.text).toContain('<dt>State</dt><dd>running</dd>');
    answer('Done.');
    await started.finished;

    const [run] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
    expect(run).toMatchObject({ status: 'ok' });
    const refreshed = (await request(app).get(live).set('cookie', cookie)).text;
    expect(refreshed).toContain('<dt>State</dt><dd>scheduled</dd>');
    expect(refreshed).toContain('<dt>Last status</dt><dd>ok</dd>');
    expect(refreshed).toContain('Done.');
  });
});

describe('cancelling a run from the dashboard', () => {
  /** A job whose run waits until its signal aborts, started now. */
  async function runningJob(h: ReturnType<typeof dashboard>['h']) {
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    h.agent.reply(
      (request) =>
        new Promise<string>((_resolve, reject) =>
          request.signal?.addEventListener('abort', () => reject(new AgentRunError('aborted', 'stopped')), { once: true }),
        ),
    );
    const started = await h.runJobNow.start({ job: job.id });
    return { job, started };
  }

  it("offers 'Cancel run' on a running job's page, and the run is recorded cancelled by dashboard", async () => {
    const { app, h } = dashboard();
    const { job, started } = await runningJob(h);
    const { signedIn, cookie } = await signIn(app);
    void signedIn;
    const page = await request(app).get(`/jobs/${job.id}`).set('cookie', cookie);
    expect(page.text).toContain('<button type="submit">Cancel run</button>');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;

    const cancelled = await request(app).post(`/jobs/${job.id}/cancel`).set('cookie', cookie).type('form').send({ csrf });
    const { report } = await started.finished;

    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.location).toContain('done=Asked%20the%20run%20to%20stop');
    expect(report.outcome).toEqual({ status: 'error', error: 'cancelled by dashboard' });
    const idle = await request(app).get(`/jobs/${job.id}`).set('cookie', cookie);
    expect(idle.text).not.toContain('Cancel run');
  });

  it('POST /api/jobs/<id>/cancel does the same, and refuses a job with no run under way with a 4xx', async () => {
    const { app, h } = dashboard();
    const { job, started } = await runningJob(h);
    const bearer = { authorization: `Bearer ${TOKEN}` };

    const cancelled = await request(app).post(`/api/jobs/${job.id}/cancel`).set(bearer);
    await started.finished;
    const again = await request(app).post(`/api/jobs/${job.id}/cancel`).set(bearer);

    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: job.id, claim: { cancel: { by: 'dashboard' } } });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
    expect(again.body.error).toBe("Job 'Digest' is scheduled, with no run under way to cancel.");
  });
});

describe("the dashboard's API", () => {
  const bearer = { authorization: `Bearer ${TOKEN}` };

  it('takes the bearer token on every method: creates, edits, pauses, runs and removes a job', async () => {
    const { app, h } = dashboard();
    const created = await request(app)
      .post('/api/jobs')
      .set(bearer)
      .send({ schedule: 'every 2h', prompt: 'Check the feeds', name: 'Feeds', skills: ['rss'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Feeds', prompt: 'Check the feeds', skills: ['rss'], state: 'scheduled' });
    const id = created.body.id as string;

    const edited = await request(app).patch(`/api/jobs/${id}`).set(bearer).send({ prompt: 'Check all feeds' });
    expect(edited.body).toMatchObject({ id, prompt: 'Check all feeds', name: 'Feeds' });
    expect((await request(app).post(`/api/jobs/${id}/pause`).set(bearer).send({ reason: 'x' })).body).toMatchObject({ state: 'paused' });
    expect((await request(app).post(`/api/jobs/${id}/resume`).set(bearer)).body).toMatchObject({ state: 'scheduled' });
    expect((await request(app).post(`/api/jobs/${id}/run`).set(bearer)).body).toMatchObject({ state: 'running' });
    await (async () => {
      while (h.repository.get(id)?.state === 'running') await new Promise((resolve) => setImmediate(resolve));
    })();

    const removed = await request(app).delete(`/api/jobs/${id}`).set(bearer);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id, name: 'Feeds' });
    expect(h.repository.get(id)).toBeUndefined();
  });

  it('refuses a new job without a schedule with an example of every schedule form of the table', async () => {
    const { app } = dashboard();

    const refused = await request(app).post('/api/jobs').set(bearer).send({ prompt: 'x' });

    expect(refused.status).toBe(400);
    for (const form of SCHEDULE_FORMS) expect(refused.body.error).toContain(`"${form.examples[0]}"`);
  });

  it('refuses a bad body in one sentence, and answers 404 in JSON for what it does not have', async () => {
    const { app } = dashboard();
    const bad = await request(app).post('/api/jobs').set(bearer).send({ schedule: 'every blue moon', prompt: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/every blue moon/);
    const unknown = await request(app).post('/api/jobs').set(bearer).send({ schedule: 'every 1h', prompt: 'x', colour: 'blue' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/^The job has no field "colour"; the fields are /);
    const broken = await request(app).post('/api/jobs').set(bearer).set('content-type', 'application/json').send('{"schedule":');
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatch(/cannot be read/);
    const missing = await request(app).delete('/api/jobs/nope').set(bearer);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/No job has the id or name "nope"/);
    const nothing = await request(app).put('/api/jobs').set(bearer);
    expect(nothing.status).toBe(404);
    expect(nothing.body.error).toBe('The dashboard API has no PUT /api/jobs; docs/dashboard.md lists what it has.');
  });

  it('refuses a wrong token and a session cookie alone for a change, and never says "Sign in first." to the token', async () => {
    const { app, h } = dashboard();
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Digest' });
    expect((await request(app).delete(`/api/jobs/${job.id}`).set('authorization', 'Bearer wrong')).status).toBe(401);
    const { cookie } = await signIn(app);
    expect((await request(app).delete(`/api/jobs/${job.id}`).set('cookie', cookie)).status).toBe(401);
    expect(h.repository.get(job.id)).toBeDefined();

    // The pages take the token too, without a CSRF token: a browser never sends the header itself.
    const paused = await request(app).post(`/jobs/${job.id}/pause`).set(bearer).type('form').send({ reason: 'by script' });
    expect(paused.status).toBe(303);
    expect(h.repository.get(job.id)).toMatchObject({ state: 'paused', paused_reason: 'by script' });
  });

  it('answers every method without a token on a loopback dashboard, but not a change a web page sent', async () => {
    const { app, h } = dashboard(null);
    const created = await request(app).post('/api/jobs').send({ schedule: 'every 2h', prompt: 'Check the feeds', name: 'Feeds' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await request(app).get(`/api/jobs/${id}`)).body).toMatchObject({ name: 'Feeds' });
    expect((await request(app).post(`/api/jobs/${id}/pause`)).body).toMatchObject({ state: 'paused' });
    expect((await request(app).patch(`/api/jobs/${id}`).send({ name: 'All feeds' })).body).toMatchObject({ name: 'All feeds' });

    const fromAPage = await request(app).delete(`/api/jobs/${id}`).set('origin', 'http://evil.example').set('sec-fetch-site', 'cross-site');
    expect(fromAPage.status).toBe(403);
    expect(fromAPage.body.error).toMatch(/^A web page of another site may not change jobs/);
    const rebound = await request(app).delete(`/api/jobs/${id}`).set('host', 'evil.example:8645');
    expect(rebound.status).toBe(421);
    expect(h.repository.get(id)).toBeDefined();

    expect((await request(app).delete(`/api/jobs/${id}`)).status).toBe(200);
    expect(h.repository.get(id)).toBeUndefined();
  });
});
