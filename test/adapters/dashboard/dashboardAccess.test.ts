import request from 'supertest';
import { DASHBOARD_TOKEN as TOKEN, dashboardHarness, signInTo } from '../../support/dashboardHarness.js';

const bearer = { authorization: `Bearer ${TOKEN}` };

describe('the names a dashboard answers at', () => {
  it.each(['localhost', 'localhost:8645', '127.0.0.1', '127.0.0.1:8645', '[::1]', '[::1]:8645', 'LOCALHOST:8645'])(
    'serves %s without a token',
    async (host) => {
      const { app } = dashboardHarness(null);
      const page = await request(app).get('/api/jobs').set('host', host);
      expect(page.status).toBe(200);
    },
  );

  it('answers 421 with one sentence to a name that merely resolves to this machine (DNS rebinding), and changes nothing', async () => {
    const { app, h } = dashboardHarness(null);
    const read = await request(app).get('/api/jobs').set('host', 'rebind.example:8645');
    expect(read.status).toBe(421);
    expect(read.body).toEqual({
      error:
        'A dashboard without a token answers only at 127.0.0.1, localhost or [::1], not at "rebind.example:8645"; open it at one of those, or set a dashboard token and add the name to dashboard.allowed_hosts.',
    });
    const created = await request(app).post('/api/jobs').set('host', 'rebind.example').send({ schedule: 'every 1h', prompt: 'x' });
    expect(created.status).toBe(421);
    expect((await h.listJobs.execute()).jobs).toEqual([]);
    const page = await request(app).get('/jobs').set('host', 'rebind.example');
    expect(page.status).toBe(421);
    expect(page.type).toBe('text/plain');
    expect(page.headers['set-cookie']).toBeUndefined();
    for (const host of ['127.0.0.2', '::1', 'localhost.', '127.0.0.1.rebind.example', '']) {
      expect((await request(app).get('/').set('host', host)).status).toBe(421);
    }
  });

  it('ignores dashboard.allowed_hosts without a token', async () => {
    const { app } = dashboardHarness(null, { allowedHosts: ['dash.example'] });
    expect((await request(app).get('/api/jobs').set('host', 'dash.example')).status).toBe(421);
  });

  it('with a token serves the allowed hosts (whatever the port) and the loopback names, and refuses any other', async () => {
    const { app } = dashboardHarness(TOKEN, { allowedHosts: ['Dash.Example', '192.168.1.5', '[fd00::5]'] });
    for (const host of ['dash.example', 'dash.example:443', '192.168.1.5:8645', '[fd00::5]:8645', 'localhost:8645', '[::1]']) {
      expect({ host, status: (await request(app).get('/api/jobs').set('host', host).set(bearer)).status }).toEqual({ host, status: 200 });
    }
    const refused = await request(app).get('/api/jobs').set('host', 'rebind.example').set(bearer);
    expect(refused.status).toBe(421);
    expect(refused.body.error).toBe(
      'The dashboard does not answer at "rebind.example"; open it at the address it listens on, or add the name to dashboard.allowed_hosts.',
    );
    // The proxy's X-Forwarded-Host is not taken without trust_proxy.
    expect(
      (await request(app).get('/api/jobs').set('x-forwarded-host', 'dash.example').set('host', 'rebind.example').set(bearer)).status,
    ).toBe(421);
  });

  it('behind a trusted proxy checks the host the client asked the proxy for', async () => {
    const { app } = dashboardHarness(TOKEN, { allowedHosts: ['dash.example'], trustProxy: true });
    expect(
      (await request(app).get('/api/jobs').set('host', '127.0.0.1:8645').set('x-forwarded-host', 'dash.example').set(bearer)).status,
    ).toBe(200);
    expect(
      (await request(app).get('/api/jobs').set('host', '127.0.0.1:8645').set('x-forwarded-host', 'rebind.example').set(bearer)).status,
    ).toBe(421);
  });
});

describe('the sign-in backoff', () => {
  const wrong = (app: ReturnType<typeof dashboardHarness>['app'], from = '203.0.113.7') =>
    request(app).post('/sign-in').set('x-forwarded-for', from).type('form').send({ token: 'guess' });
  const right = (app: ReturnType<typeof dashboardHarness>['app'], from = '203.0.113.7') =>
    request(app).post('/sign-in').set('x-forwarded-for', from).type('form').send({ token: TOKEN });

  it('refuses every sign-in with 429 and Retry-After after 5 wrong tokens, the right one too, until the wait is over', async () => {
    const { app, h } = dashboardHarness(TOKEN, { trustProxy: true });
    for (let attempt = 1; attempt <= 5; attempt++) expect((await wrong(app)).status).toBe(401);
    const refused = await right(app);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.text).toContain('Too many wrong tokens were tried; try again in 60 seconds.');
    expect(refused.headers['set-cookie']).toBeUndefined();

    h.clock.advance(59_000);
    expect((await right(app)).headers['retry-after']).toBe('1');
    h.clock.advance(1_000);
    expect((await right(app)).status).toBe(303);
  });

  it('doubles the wait with each further wrong token, up to 15 minutes', async () => {
    const { app, h } = dashboardHarness(TOKEN, { trustProxy: true });
    for (let attempt = 1; attempt <= 4; attempt++) await wrong(app);
    const waits: number[] = [];
    for (let round = 0; round < 7; round++) {
      expect((await wrong(app)).status).toBe(401);
      const refused = await wrong(app);
      expect(refused.status).toBe(429);
      const wait = Number(refused.headers['retry-after']);
      waits.push(wait);
      h.clock.advance(wait * 1000);
    }
    expect(waits).toEqual([60, 120, 240, 480, 900, 900, 900]);
  });

  it('refuses the attempts made while waiting without counting them: 50 wrong sign-ins wait as long as 5', async () => {
    const { app, h } = dashboardHarness(TOKEN, { trustProxy: true });
    for (let attempt = 1; attempt <= 50; attempt++) await wrong(app);
    const refused = await right(app);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    h.clock.advance(60_000);
    expect((await right(app)).status).toBe(303);
  });

  it('counts per client address, and over all addresses after 20 wrong tokens', async () => {
    const { app } = dashboardHarness(TOKEN, { trustProxy: true });
    for (let attempt = 1; attempt <= 5; attempt++) await wrong(app, '203.0.113.1');
    expect((await right(app, '203.0.113.1')).status).toBe(429);
    expect((await right(app, '203.0.113.2')).status).toBe(303);

    // 15 more from three other addresses, none of them backed off on its own: 20 in all.
    for (const from of ['198.51.100.1', '198.51.100.2', '198.51.100.3'])
      for (let attempt = 1; attempt <= 5; attempt++) await wrong(app, from);
    const everyone = await right(app, '203.0.113.9');
    expect(everyone.status).toBe(429);
    expect(everyone.headers['retry-after']).toBe('60');
  });

  it('without trust_proxy takes the socket address, not X-Forwarded-For', async () => {
    const { app } = dashboardHarness(TOKEN);
    for (let attempt = 1; attempt <= 5; attempt++) await wrong(app, `198.51.100.${attempt}`);
    expect((await right(app, '198.51.100.99')).status).toBe(429);
  });

  it('logs the wrong tokens before a backoff, then the backoff once an hour per address', async () => {
    const { app, h } = dashboardHarness(TOKEN, { trustProxy: true });
    for (let attempt = 1; attempt <= 50; attempt++) await wrong(app);
    const about = () => h.log.entries.filter((entry) => entry.message.includes('203.0.113.7')).map((entry) => entry.message);
    expect(about()).toHaveLength(5);
    expect(about().slice(0, 4)).toEqual(Array(4).fill('dashboard: a sign-in from 203.0.113.7 with a wrong token was refused'));
    expect(about()[4]).toBe(
      'dashboard: 5 attempts from 203.0.113.7 had a wrong token; its attempts are refused for 1 minute, twice as long after each further wrong one, up to 15 minutes (this is logged once an hour per address)',
    );

    // Backed off again and again within the hour: not logged again.
    for (let round = 0; round < 3; round++) {
      h.clock.advance(15 * 60_000);
      await wrong(app);
    }
    expect(about()).toHaveLength(5);
    h.clock.advance(15 * 60_000);
    await wrong(app);
    expect(about()).toHaveLength(6);
    expect(about()[5]).toMatch(/^dashboard: 9 attempts from 203\.0\.113\.7 had a wrong token; its attempts are refused for 15 minutes/);
  });

  it('counts wrong bearer tokens too, and refuses the right one with 429 while waiting', async () => {
    const { app, h } = dashboardHarness(TOKEN);
    for (let attempt = 1; attempt <= 5; attempt++)
      expect((await request(app).get('/api/jobs').set('authorization', 'Bearer guess')).status).toBe(401);
    const api = await request(app).get('/api/jobs').set(bearer);
    expect(api.status).toBe(429);
    expect(api.headers['retry-after']).toBe('60');
    expect(api.body).toEqual({ error: 'Too many wrong tokens were tried; try again in 60 seconds.' });
    expect((await request(app).get('/jobs').set(bearer)).status).toBe(429);
    expect((await request(app).post('/sign-in').type('form').send({ token: TOKEN })).status).toBe(429);
    h.clock.advance(60_000);
    expect((await request(app).get('/api/jobs').set(bearer)).status).toBe(200);
  });

  it('leaves signed-in sessions alone', async () => {
    const { app } = dashboardHarness(TOKEN);
    const { cookie } = await signInTo(app);
    for (let attempt = 1; attempt <= 6; attempt++) await request(app).post('/sign-in').type('form').send({ token: 'guess' });
    expect((await request(app).get('/jobs').set('cookie', cookie)).status).toBe(200);
  });
});

describe("the dashboard's session cookie and framing", () => {
  it('is __Host- prefixed and Secure when a trusted proxy says the request came over https', async () => {
    const { app } = dashboardHarness(TOKEN, { trustProxy: true });
    const signedIn = await request(app).post('/sign-in').set('x-forwarded-proto', 'https').type('form').send({ token: TOKEN });
    expect(signedIn.headers['set-cookie']![0]).toMatch(/^__Host-agent_dashboard=[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    const cookie = signedIn.headers['set-cookie']![0]!.split(';')[0]!;
    expect((await request(app).get('/jobs').set('x-forwarded-proto', 'https').set('cookie', cookie)).status).toBe(200);
    // The session is found (so the missing CSRF token is what is refused, not the sign-in).
    const signedOut = await request(app)
      .post('/sign-out')
      .set('x-forwarded-proto', 'https')
      .set('cookie', cookie)
      .type('form')
      .send({ csrf: 'x' });
    expect(signedOut.status).toBe(403);
  });

  it('keeps its plain name, without Secure, over http and when X-Forwarded-Proto comes without trust_proxy', async () => {
    for (const trustProxy of [true, false]) {
      const { app } = dashboardHarness(TOKEN, { trustProxy });
      const signedIn = await request(app)
        .post('/sign-in')
        .set('x-forwarded-proto', trustProxy ? 'http' : 'https')
        .type('form')
        .send({ token: TOKEN });
      expect(signedIn.headers['set-cookie']![0]).toMatch(/^agent_dashboard=[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/);
    }
    const { app } = dashboardHarness(null);
    const page = await request(app).get('/jobs').set('x-forwarded-proto', 'https');
    expect(page.headers['set-cookie']![0]).toMatch(/^agent_dashboard=[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/);
  });

  it('does not take the plain cookie over https, nor the __Host- one over http', async () => {
    const { app } = dashboardHarness(TOKEN, { trustProxy: true });
    const plain = (await request(app).post('/sign-in').type('form').send({ token: TOKEN })).headers['set-cookie']![0]!.split(';')[0]!;
    expect((await request(app).get('/jobs').set('x-forwarded-proto', 'https').set('cookie', plain)).status).toBe(401);
    const secure = (await request(app).post('/sign-in').set('x-forwarded-proto', 'https').type('form').send({ token: TOKEN })).headers[
      'set-cookie'
    ]![0]!.split(';')[0]!;
    expect((await request(app).get('/jobs').set('cookie', secure)).status).toBe(401);
  });

  it('says X-Frame-Options: DENY beside the CSP on every answer', async () => {
    const { app } = dashboardHarness(TOKEN);
    const { cookie } = await signInTo(app);
    const answers = [
      await request(app).get('/'),
      await request(app).get('/jobs').set('cookie', cookie),
      await request(app).get('/assets/dashboard.css'),
      await request(app).get('/api/jobs'),
      await request(app).get('/api/nothing').set(bearer),
      await request(app).get('/nothing').set('cookie', cookie),
      await request(app).get('/').set('host', 'rebind.example'),
    ];
    for (const answer of answers) {
      expect(answer.headers['x-frame-options']).toBe('DENY');
      expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
  });
});
