import request from 'supertest';
import type { DashboardDependencies } from '../../../src/adapters/dashboard/dashboardDependencies.js';
import type { ListedWebhookRun } from '../../../src/application/webhook/ListWebhookRuns.js';
import { defineSubscription, subscriptionRoute, type WebhookSubscription } from '../../../src/domain/webhook/WebhookSubscription.js';
import { dashboardHarness, signInTo } from '../../support/dashboardHarness.js';

type Webhooks = DashboardDependencies['webhooks'];

/** A dashboard whose webhook use cases keep subscriptions in a map, as the real ones keep them in their store. */
function withSubscriptions(extra: Partial<Webhooks> = {}) {
  const subscriptions = new Map<string, WebhookSubscription>();
  const webhooks: Partial<Webhooks> = {
    listing: async () => ({
      routes: [...subscriptions.values()].map(subscriptionRoute),
      unusable: [],
      subscriptionProblems: [],
      storeProblem: null,
    }),
    subscribe: async (input) => {
      const { name, ...options } = input;
      const subscription = defineSubscription(
        name,
        options,
        subscriptions.get(name) ?? null,
        new Date(),
        () => 'generated-secret-0123456789',
      );
      subscriptions.set(name, subscription);
      return { subscription, created: true };
    },
    remove: async (name) => {
      const removed = subscriptions.get(name)!;
      subscriptions.delete(name);
      return removed;
    },
    ...extra,
  };
  return { ...dashboardHarness(undefined, { webhooks }), subscriptions };
}

describe('making and removing a webhook subscription on the dashboard', () => {
  it('shows the secret once, on the page that answers, and lists the subscription without it', async () => {
    const { app, subscriptions } = withSubscriptions();
    const { cookie, csrf } = await signInTo(app, '/webhooks');
    const made = await request(app)
      .post('/webhooks')
      .set('cookie', cookie)
      .type('form')
      .send({ csrf, name: 'deploys', events: 'push, release', prompt: 'Say {ref}', deliver: '' });
    expect(made.status).toBe(201);
    expect(made.text).toContain('<code id="secret">generated-secret-0123456789</code>');
    expect(made.text).toContain('<button type="button" data-copy="secret" hidden>Copy</button>');
    expect(made.text).toContain('http://127.0.0.1:8644/webhooks/deploys');
    expect(subscriptions.get('deploys')).toMatchObject({ events: ['push', 'release'], prompt: 'Say {ref}', deliver: 'log' });

    const listed = await request(app).get('/webhooks').set('cookie', cookie);
    expect(listed.text).toMatch(/<th scope="row">deploys<\/th><td>subscription<\/td><td>push, release<\/td><td>log<\/td>/);
    expect(listed.text).not.toContain('generated-secret');
  });

  it('refuses a name a subscription has, and a bad name, with a sentence, keeping what was typed', async () => {
    const { app } = withSubscriptions();
    const { cookie, csrf } = await signInTo(app, '/webhooks');
    await request(app).post('/webhooks').set('cookie', cookie).type('form').send({ csrf, name: 'deploys' });
    const again = await request(app).post('/webhooks').set('cookie', cookie).type('form').send({ csrf, name: 'deploys', prompt: 'Kept' });
    expect(again.status).toBe(400);
    expect(again.text).toContain('A subscription named &quot;deploys&quot; exists already');
    expect(again.text).toContain('>Kept</textarea>');
    const bad = await request(app).post('/webhooks').set('cookie', cookie).type('form').send({ csrf, name: '-no good' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('class="problem" role="alert"');
  });

  it('refuses to make or remove one without the CSRF token, and removes one only once confirmed', async () => {
    const { app, subscriptions } = withSubscriptions();
    const { cookie, csrf } = await signInTo(app, '/webhooks');
    expect((await request(app).post('/webhooks').set('cookie', cookie).type('form').send({ name: 'forged' })).status).toBe(403);
    expect(subscriptions.has('forged')).toBe(false);
    await request(app).post('/webhooks').set('cookie', cookie).type('form').send({ csrf, name: 'deploys' });

    expect((await request(app).post('/webhooks/deploys/remove').set('cookie', cookie).type('form').send({ confirm: 'yes' })).status).toBe(
      403,
    );
    const unconfirmed = await request(app).post('/webhooks/deploys/remove').set('cookie', cookie).type('form').send({ csrf });
    expect(unconfirmed.headers.location).toBe('/webhooks/deploys/remove');
    expect(subscriptions.has('deploys')).toBe(true);
    const page = await request(app).get('/webhooks/deploys/remove').set('cookie', cookie);
    expect(page.text).toContain('<h1>Remove subscription deploys?</h1>');
    const removed = await request(app).post('/webhooks/deploys/remove').set('cookie', cookie).type('form').send({ csrf, confirm: 'yes' });
    expect(decodeURIComponent(removed.headers.location!)).toBe('/webhooks?done=Removed webhook subscription deploys.');
    expect(subscriptions.has('deploys')).toBe(false);
  });

  it("follows an accepted test event to its run's outcome", async () => {
    const runs: ListedWebhookRun[] = [];
    const { app } = withSubscriptions({
      sendTest: async () => ({ status: 202, body: '{"status":"accepted","delivery_id":"d-42"}' }),
      runs: async () => runs,
    });
    const { cookie, csrf } = await signInTo(app, '/webhooks');
    await request(app).post('/webhooks').set('cookie', cookie).type('form').send({ csrf, name: 'deploys' });
    const sent = await request(app).post('/webhooks/deploys/test').set('cookie', cookie).type('form').send({ csrf });
    expect(sent.headers.location).toMatch(/&tested=deploys&delivery=d-42$/);
    const page = await request(app).get(sent.headers.location!).set('cookie', cookie);
    expect(page.text).toContain('data-live="/fragments/webhooks/test?route=deploys&amp;delivery=d-42"');
    expect(page.text).toContain('waiting for its run');

    runs.push({
      eventId: 'e-1',
      route: 'deploys',
      event: 'test',
      deliveryId: 'd-42',
      receivedAt: new Date().toISOString(),
      startedAt: new Date().toISOString(),
      outcome: 'delivered',
      deliveredTo: 'the log',
      prompt: 'p',
      answer: 'a',
      error: null,
      ledger: null,
    });
    const fragment = await request(app).get('/fragments/webhooks/test?route=deploys&delivery=d-42').set('cookie', cookie);
    expect(fragment.text).toContain('<span class="badge status-delivered">delivered</span>');
  });
});

describe('the overview', () => {
  it('counts jobs by state and last status, each a link to the filtered jobs list, which filters so', async () => {
    const { app, h } = dashboardHarness();
    const paused = await h.createJob.execute({ schedule: 'every 1h', prompt: 'x', name: 'Quiet' });
    await h.pauseJob.execute({ job: paused.id, reason: null });
    await h.createJob.execute({ schedule: 'every 2h', prompt: 'y', name: 'Busy' });
    const { cookie } = await signInTo(app, '/');
    const overview = await request(app).get('/').set('cookie', cookie);
    expect(overview.text).toContain('<a href="/jobs?state=paused"><span class="count">1</span> <span class="label">paused</span></a>');
    expect(overview.text).toContain('<a href="/jobs?status=never"><span class="count">2</span> <span class="label">never ran</span></a>');
    expect(overview.text).toContain('<a href="/runs?status=error"><span class="count">0</span>');
    expect(overview.text).toMatch(/<div class="chart-canvas" id="runs-per-hour" data-chart="\{&quot;labels&quot;:\[/);
    expect(overview.text).toContain('<script src="/assets/uplot.js" defer></script>');

    const pausedList = await request(app).get('/jobs?state=paused').set('cookie', cookie);
    expect(pausedList.text).toContain('>Quiet</a>');
    expect(pausedList.text).not.toContain('>Busy</a>');
    const never = await request(app).get('/jobs?status=never').set('cookie', cookie);
    expect(never.text).toContain('>Busy</a>');
    const ok = await request(app).get('/jobs?status=ok').set('cookie', cookie);
    expect(ok.text).toContain('No job matches.');
  });

  it('serves the chart library and its own scripts itself', async () => {
    const { app } = dashboardHarness();
    const script = await request(app).get('/assets/uplot.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.text).toContain('uPlot');
    expect((await request(app).get('/assets/uplot.css')).headers['content-type']).toMatch(/^text\/css/);
    expect((await request(app).get('/assets/shortcuts.js')).text).toContain("'/webhooks'");
    expect((await request(app).get('/assets/charts.js')).text).toContain('uPlot.paths.bars');
  });
});
