import { createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { sign } from '@octokit/webhooks-methods';
import request from 'supertest';
import { createWebhookApp } from '../../../src/adapters/http/webhookApp.js';
import type { WebhookRoute } from '../../../src/domain/webhook/WebhookRoute.js';
import { aRoute, FakeWebhookRoutes } from '../../support/fakes/FakeWebhookRoutes.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { startWebhookListener, type WebhookListener } from '../../support/webhookListener.js';

const SECRET = 's3cret';
const BODY = JSON.stringify({ action: 'opened', number: 7, pull_request: { title: 'Fix the tick' } });

const routes: WebhookRoute[] = [
  aRoute('ci'),
  aRoute('prs', { events: ['pull_request'], filters: [{ field: 'action', in: ['opened', 'reopened'] }] }),
  aRoute('rotating', { secrets: { kind: 'secrets', values: ['new-secret', 'old-secret'] } }),
  aRoute('dev', { secrets: { kind: 'insecure_no_auth' } }),
];

async function hub(body: string | Buffer, secret = SECRET): Promise<string> {
  return sign(secret, typeof body === 'string' ? body : body.toString('latin1'));
}

/** X-Hub-Signature-256 of any bytes (octokit's `sign` takes a string). */
function hubOfBytes(body: Buffer, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

describe('webhook listener over HTTP', () => {
  let listener: WebhookListener;

  beforeEach(async () => {
    listener = await startWebhookListener({ routes, settings: { maxBodyBytes: 64 * 1024, rateLimitPerMinute: 5 } });
  });

  afterEach(async () => {
    await listener.close();
  });

  const post = (path: string) => request(listener.url).post(path).set('Content-Type', 'application/json');

  it('answers GET /health', async () => {
    const response = await request(listener.url).get('/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', platform: 'webhook' });
  });

  describe('accepted and ignored requests', () => {
    it('accepts a signed event with 202 and stores it in the inbox', async () => {
      const response = await post('/webhooks/ci')
        .set('X-GitHub-Event', 'pull_request')
        .set('X-GitHub-Delivery', '72d3162e-cc78-11e3-81ab-4c9367dc0958')
        .set('X-Hub-Signature-256', await hub(BODY))
        .send(BODY);
      expect(response.status).toBe(202);
      expect(response.body).toEqual({
        status: 'accepted',
        route: 'ci',
        event: 'pull_request',
        delivery_id: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      });
      expect(await listener.stored()).toEqual([expect.objectContaining({ route: 'ci', event: 'pull_request', payload: JSON.parse(BODY) })]);
    });

    it('accepts the neutral header names too', async () => {
      const response = await post('/webhooks/ci')
        .set('X-Hosta-Event', 'issues')
        .set('X-Hosta-Delivery', 'd-9')
        .set('X-Hub-Signature-256', await hub(BODY))
        .send(BODY);
      expect(response.body).toEqual({ status: 'accepted', route: 'ci', event: 'issues', delivery_id: 'd-9' });
    });

    it("ignores an event not in the route's list with 200", async () => {
      const body = '{"zen":"Design for failure.","hook_id":1}';
      const response = await post('/webhooks/prs')
        .set('X-GitHub-Event', 'ping')
        .set('X-Hub-Signature-256', await hub(body))
        .send(body);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ignored', event: 'ping' });
      expect(await listener.inbox.pending()).toBe(0);
    });

    it('ignores a payload that misses the filters with 200', async () => {
      const body = '{"action":"closed"}';
      const response = await post('/webhooks/prs')
        .set('X-GitHub-Event', 'pull_request')
        .set('X-Hub-Signature-256', await hub(body))
        .send(body);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ignored', reason: 'filter', route: 'prs' });
    });

    it('drops a repeated delivery with 200 duplicate', async () => {
      const send = async () =>
        post('/webhooks/ci')
          .set('X-GitHub-Delivery', 'abc')
          .set('X-Hub-Signature-256', await hub(BODY))
          .send(BODY);
      expect((await send()).status).toBe(202);
      const again = await send();
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ status: 'duplicate', delivery_id: 'abc' });
      expect(await listener.inbox.pending()).toBe(1);
    });

    it('takes a form-encoded body whose payload field holds the JSON, signed over the form bytes', async () => {
      const form = `payload=${encodeURIComponent(BODY)}`;
      const response = await request(listener.url)
        .post('/webhooks/ci')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('X-GitHub-Event', 'pull_request')
        .set('X-Hub-Signature-256', await hub(form))
        .send(form);
      expect(response.status).toBe(202);
      expect((await listener.stored())[0]!.payload).toEqual(JSON.parse(BODY));
    });

    it('reads a JSON object sent form-encoded (as curl -d sends it) as JSON, signed over the bytes sent', async () => {
      const response = await request(listener.url)
        .post('/webhooks/ci')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('X-GitHub-Event', 'pull_request')
        .set('X-Hub-Signature-256', await hub(BODY))
        .send(BODY);
      expect(response.status).toBe(202);
      expect((await listener.stored())[0]!.payload).toEqual(JSON.parse(BODY));
    });

    it('still turns plain form fields into an object of fields', async () => {
      const form = 'status=firing&alert=DiskFull+on+db1';
      const response = await request(listener.url)
        .post('/webhooks/ci')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('X-Hub-Signature-256', await hub(form))
        .send(form);
      expect(response.status).toBe(202);
      expect((await listener.stored())[0]!.payload).toEqual({ status: 'firing', alert: 'DiskFull on db1' });
    });

    it('answers 400 Malformed JSON for a form-encoded body that starts like JSON but is not', async () => {
      const body = '{"status": firing}';
      const response = await request(listener.url)
        .post('/webhooks/ci')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .set('X-Hub-Signature-256', await hub(body))
        .send(body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: 'Malformed JSON' });
    });

    it('accepts on a route with INSECURE_NO_AUTH without any signature', async () => {
      expect((await post('/webhooks/dev').send(BODY)).status).toBe(202);
    });
  });

  describe('authentication schemes', () => {
    it("takes the second code host's token, by its real and its neutral name", async () => {
      const mergeRequest = '{"object_kind":"merge_request","object_attributes":{"iid":3}}';
      const real = await post('/webhooks/ci').set('X-Gitlab-Event', 'Merge Request Hook').set('X-Gitlab-Token', SECRET).send(mergeRequest);
      expect(real.status).toBe(202);
      expect(real.body.event).toBe('Merge Request Hook');
      const neutral = await post('/webhooks/ci').set('X-Hostb-Event', 'Push Hook').set('X-Hostb-Token', SECRET).send(mergeRequest);
      expect(neutral.body).toMatchObject({ status: 'accepted', event: 'Push Hook' });
      expect((await post('/webhooks/ci').set('X-Gitlab-Token', 'nope').send(mergeRequest)).status).toBe(401);
    });

    it('takes the Standard Webhooks test vector, and its webhook-id as the delivery id', async () => {
      // Published by the Standard Webhooks reference libraries (see WebhookSignatureVerifier.test.ts).
      listener.routes.set(aRoute('standard', { secrets: { kind: 'secrets', values: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } }));
      listener.clock.set(new Date(1614265330 * 1000));
      const send = () =>
        post('/webhooks/standard')
          .set('webhook-id', 'msg_p5jXN8AQM9LWM0D4loKWxJek')
          .set('webhook-timestamp', '1614265330')
          .set('webhook-signature', 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
          .send('{"test": 2432232314}');
      const response = await send();
      expect(response.status).toBe(202);
      expect(response.body).toEqual({
        status: 'accepted',
        route: 'standard',
        event: 'unknown',
        delivery_id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      });
      expect((await send()).body).toEqual({ status: 'duplicate', delivery_id: 'msg_p5jXN8AQM9LWM0D4loKWxJek' });
      listener.clock.set(new Date((1614265330 + 301) * 1000));
      expect((await send()).status).toBe(401);
    });

    it('takes a Stripe signature and the payload type as the event', async () => {
      listener.routes.set(
        aRoute('stripe', { secrets: { kind: 'secrets', values: ['whsec_test_secret'] }, events: ['payment_intent.succeeded'] }),
      );
      const body = '{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"amount":2000}}}';
      const t = Math.floor(listener.clock.now().getTime() / 1000);
      const v1 = createHmac('sha256', 'whsec_test_secret').update(`${t}.${body}`).digest('hex');
      const response = await post('/webhooks/stripe').set('Stripe-Signature', `t=${t},v1=${v1}`).send(body);
      expect(response.status).toBe(202);
      expect(response.body.event).toBe('payment_intent.succeeded');
      expect(
        (
          await post('/webhooks/stripe')
            .set('Stripe-Signature', `t=${t - 301},v1=${v1}`)
            .send(body)
        ).status,
      ).toBe(401);
    });

    it('takes a bearer token', async () => {
      expect((await post('/webhooks/ci').set('Authorization', `Bearer ${SECRET}`).send(BODY)).status).toBe(202);
      expect((await post('/webhooks/ci').set('Authorization', 'Bearer other').send(BODY)).status).toBe(401);
    });

    it('takes any secret of a rotation list, and no retired one', async () => {
      for (const secret of ['old-secret', 'new-secret']) {
        expect(
          (
            await post('/webhooks/rotating')
              .set('X-Hub-Signature-256', await hub(BODY, secret))
              .send(BODY)
          ).status,
        ).toBe(202);
      }
      expect(
        (
          await post('/webhooks/rotating')
            .set('X-Hub-Signature-256', await hub(BODY, 'retired'))
            .send(BODY)
        ).status,
      ).toBe(401);
    });

    it('answers 401 Invalid signature without a signature, or with a wrong one', async () => {
      for (const response of [
        await post('/webhooks/ci').send(BODY),
        await post('/webhooks/ci')
          .set('X-Hub-Signature-256', await hub(BODY, 'wrong'))
          .send(BODY),
        await post('/webhooks/ci')
          .set('X-Hub-Signature-256', await hub(`${BODY} `))
          .send(BODY),
      ]) {
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: 'Invalid signature' });
      }
    });

    it('never logs a secret or a signature', async () => {
      const signature = await hub(BODY);
      await post('/webhooks/ci').set('X-Hub-Signature-256', signature).send(BODY);
      await post('/webhooks/ci')
        .set('X-Hub-Signature-256', await hub(BODY, 'wrong'))
        .send(BODY);
      await post('/webhooks/ci').set('Authorization', 'Bearer guess-1').send(BODY);
      const log = JSON.stringify(listener.logger.entries);
      for (const secretText of [SECRET, signature.slice(7), 'guess-1']) expect(log).not.toContain(secretText);
    });
  });

  describe('the order of checks: route, size, signature, rate limit, body', () => {
    it('answers 404 for an unknown route, even with a huge body', async () => {
      const response = await post('/webhooks/nope').send('x'.repeat(2 * 1024 * 1024));
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'Unknown route' });
    });

    it('answers 413 for a body over max_body_bytes, even with a bad signature', async () => {
      const big = JSON.stringify({ blob: 'x'.repeat(70 * 1024) });
      const response = await post('/webhooks/ci').set('X-Hub-Signature-256', 'sha256=bad').send(big);
      expect(response.status).toBe(413);
      expect(response.body).toEqual({ error: 'Payload too large' });
    });

    it('takes a body of exactly max_body_bytes', async () => {
      const exact = JSON.stringify({ blob: 'x'.repeat(64 * 1024 - 11) });
      expect(Buffer.byteLength(exact)).toBe(64 * 1024);
      expect(
        (
          await post('/webhooks/ci')
            .set('X-Hub-Signature-256', await hub(exact))
            .send(exact)
        ).status,
      ).toBe(202);
    });

    it('answers 401, not 429, for a bad signature over the rate limit, and does not count it', async () => {
      const signature = await hub(BODY);
      for (let i = 0; i < 5; i += 1) expect((await post('/webhooks/ci').set('X-Hub-Signature-256', signature).send(BODY)).status).toBe(202);
      expect((await post('/webhooks/ci').set('X-Hub-Signature-256', 'sha256=00').send(BODY)).status).toBe(401);
      const limited = await post('/webhooks/ci').set('X-Hub-Signature-256', signature).send(BODY);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: 'Rate limit exceeded' });
      expect(limited.headers['retry-after']).toBe('60');
    });

    it('does not count refused signatures towards the limit', async () => {
      for (let i = 0; i < 20; i += 1)
        expect((await post('/webhooks/ci').set('X-Hub-Signature-256', 'sha256=00').send(BODY)).status).toBe(401);
      expect(
        (
          await post('/webhooks/ci')
            .set('X-Hub-Signature-256', await hub(BODY))
            .send(BODY)
        ).status,
      ).toBe(202);
    });

    it('lets the rate limit pass again once the window has moved on', async () => {
      const signature = await hub(BODY);
      for (let i = 0; i < 5; i += 1) await post('/webhooks/ci').set('X-Hub-Signature-256', signature).send(BODY);
      listener.clock.advance(45_000);
      const limited = await post('/webhooks/ci').set('X-Hub-Signature-256', signature).send(BODY);
      expect(limited.headers['retry-after']).toBe('15');
      listener.clock.advance(15_000);
      expect((await post('/webhooks/ci').set('X-Hub-Signature-256', signature).send(BODY)).status).toBe(202);
    });

    it('answers 400 Malformed JSON for a body that is not JSON, under a valid signature', async () => {
      const response = await post('/webhooks/ci')
        .set('X-Hub-Signature-256', await hub('{"action":'))
        .send('{"action":');
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: 'Malformed JSON' });
    });

    it('answers 400 for JSON that is not an object', async () => {
      for (const body of ['[{"action":"opened"}]', '"opened"', '42', 'null']) {
        const response = await post('/webhooks/ci')
          .set('X-Hub-Signature-256', await hub(body))
          .send(body);
        expect(response.status).toBe(400);
        expect(response.body).toEqual({ error: 'Malformed JSON' });
      }
    });

    it('answers 400 for a body that is not UTF-8', async () => {
      const body = Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xc3, 0x28, 0xa0, 0xff]), Buffer.from('"}')]);
      const response = await postBytes(listener.port, '/webhooks/ci', body, { 'x-hub-signature-256': hubOfBytes(body) });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toEqual({ error: 'Malformed JSON' });
    });

    it('answers 400, not 200 ignored, for a malformed body of an event the route ignores', async () => {
      const response = await post('/webhooks/prs')
        .set('X-GitHub-Event', 'ping')
        .set('X-Hub-Signature-256', await hub('nope'))
        .send('nope');
      expect(response.status).toBe(400);
    });
  });

  describe('oversized and slow requests', () => {
    it('answers 413 to a chunked body (no Content-Length) as soon as it passes the limit', async () => {
      const { status, body, sent } = await streamBody(listener.port, '/webhooks/ci', 16 * 1024, 10 * 1024 * 1024);
      expect(status).toBe(413);
      expect(JSON.parse(body)).toEqual({ error: 'Payload too large' });
      expect(sent).toBeLessThan(10 * 1024 * 1024);
    });

    it('answers 413 from Content-Length before reading any of the body', async () => {
      const raw = await rawExchange(
        listener.port,
        `POST /webhooks/ci HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n{"a":`,
      );
      expect(raw).toMatch(/^HTTP\/1\.1 413 /);
      expect(raw).toContain('{"error":"Payload too large"}');
    });

    // A byte every 50 ms keeps any per-chunk timer from firing: only a deadline for the whole body
    // answers before the 4096 bytes (204 s) are in, and the test's timeout comes long before that.
    it('answers 408 without a 5xx to a body that trickles in too slowly, and holds nothing afterwards', async () => {
      const slow = await startWebhookListener({ routes, settings: { bodyReadTimeoutMs: 400 } });
      try {
        const { status, body, sent } = await trickle(slow.port, '/webhooks/ci', 4096, 50);
        expect(status).toBe(408);
        expect(JSON.parse(body)).toEqual({ error: 'Request timeout' });
        expect(sent).toBeLessThan(4096);
        expect((await request(slow.url).get('/health')).status).toBe(200);
      } finally {
        await slow.close();
      }
    });

    it('does not invite the body of an unknown route or of a declared oversize with 100 Continue', async () => {
      const unknown = await rawExchange(
        listener.port,
        'POST /webhooks/nope HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n',
      );
      expect(unknown).toMatch(/^HTTP\/1\.1 404 /);
      const oversize = await rawExchange(
        listener.port,
        `POST /webhooks/ci HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`,
      );
      expect(oversize).toMatch(/^HTTP\/1\.1 413 /);
    });

    it('answers 100 Continue once the route and the size are right, then takes the body', async () => {
      const body = '{"action":"opened"}';
      const head = `POST /webhooks/dev HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(listener.port, '127.0.0.1', () => socket.write(head));
        let text = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => {
          const before = text;
          text += chunk;
          if (!before.includes('100 Continue') && text.includes('100 Continue')) socket.write(body);
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 202 /);
    });

    it('answers a very large header with 431, a 4xx', async () => {
      const response = await post('/webhooks/ci')
        .set('X-Padding', 'p'.repeat(32 * 1024))
        .send(BODY);
      expect(response.status).toBe(431);
    });
  });

  describe('other requests', () => {
    it('answers 404 JSON for any other path', async () => {
      for (const path of ['/', '/webhooks', '/webhooks/ci/extra', '/api/cron/fire', '/health/x']) {
        const response = await request(listener.url).post(path).send(BODY);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ error: 'Not found' });
      }
    });

    it('answers 405 JSON for another method on a known path', async () => {
      const response = await request(listener.url).get('/webhooks/ci');
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
      expect(response.body).toEqual({ error: 'Method not allowed' });
      const health = await request(listener.url).delete('/HEALTH');
      expect(health.status).toBe(405);
      expect(health.headers.allow).toBe('GET, HEAD');
    });

    it('answers 400 JSON for a path with broken percent-encoding', async () => {
      const response = await rawExchange(listener.port, 'POST /webhooks/%E0%A4%A HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
      expect(response).toMatch(/^HTTP\/1\.1 400 /);
      expect(response).toContain('{"error":"Bad Request"}');
    });

    it.each(['/webhooks/ci', '/webhooks/ci?source=github', '/webhooks/ci/', '/WEBHOOKS/ci', '/webhooks/%63i'])(
      "answers alike however the path %s is written (the plain shape skips Express's dispatch, the rest goes through it)",
      async (path) => {
        const accepted = await post(path)
          .set('X-Hub-Signature-256', await hub(BODY))
          .set('X-GitHub-Delivery', `d-${path}`)
          .send(BODY);
        expect(accepted.status).toBe(202);
        expect(accepted.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(accepted.body).toMatchObject({ status: 'accepted', route: 'ci' });

        const refused = await post(path).set('X-Hub-Signature-256', 'sha256=00').send(BODY);
        expect(refused.status).toBe(401);
        expect(refused.body).toEqual({ error: 'Invalid signature' });
      },
    );

    it('serves a route added while running, by its percent-encoded name too', async () => {
      listener.routes.set(aRoute('new-route'));
      const response = await post('/webhooks/new%2Droute')
        .set('X-Hub-Signature-256', await hub(BODY))
        .send(BODY);
      expect(response.body).toMatchObject({ status: 'accepted', route: 'new-route' });
    });
  });

  describe('names no route can have', () => {
    const long = 'r'.repeat(65);

    // The routes hold each name, unauthenticated: only the name rule keeps it from being served.
    it.each([
      ['..', '/webhooks/..'],
      ['a/b', '/webhooks/a%2Fb'],
      ['65 characters', `/webhooks/${long}`],
      ['a dot', '/webhooks/my.route'],
    ])('answers 404 Unknown route to a POST to %s and stores nothing', async (_case, path) => {
      for (const name of ['..', 'a/b', long, 'my.route']) listener.routes.set(aRoute(name, { secrets: { kind: 'insecure_no_auth' } }));

      const response = await postBytes(listener.port, path, Buffer.from(BODY), {});

      expect(response.status).toBe(404);
      expect(JSON.parse(response.body)).toEqual({ error: 'Unknown route' });
      expect(await listener.inbox.pending()).toBe(0);
    });

    it('answers 404 Unknown route, not 405, to another method on such a name', async () => {
      const response = await request(listener.url).get('/webhooks/a%2Fb');

      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'Unknown route' });
    });

    it('serves a name of 64 characters, upper case included', async () => {
      const name = `Deploy_Hook-${'x'.repeat(52)}`;
      listener.routes.set(aRoute(name));

      const response = await post(`/webhooks/${name}`)
        .set('X-Hub-Signature-256', await hub(BODY))
        .send(BODY);

      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ status: 'accepted', route: name });
    });
  });
});

describe('webhook app failures inside the service', () => {
  const build = (options: { find?: () => Promise<never>; execute?: () => Promise<never> }) => {
    const routes = new FakeWebhookRoutes([aRoute('ci')]);
    if (options.find) routes.find = options.find;
    const logger = new RecordingLogger();
    const app = createWebhookApp({
      routes,
      acceptWebhook: {
        execute:
          options.execute ?? (async () => ({ kind: 'accepted' as const, route: 'ci', event: 'push', deliveryId: 'd-1', eventId: 'e-1' })),
      },
      settings: { maxBodyBytes: 1024, bodyReadTimeoutMs: 1000 },
      logger,
    });
    return { app, logger };
  };

  it('answers 503 when the routes cannot be read', async () => {
    const { app } = build({ find: async () => Promise.reject(new Error('EIO')) });
    const response = await request(app).post('/webhooks/ci').send('{}');
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: 'Routes unavailable; retry later' });
  });

  it('turns an unexpected error into a 500 with no message or stack trace in the body, and logs it', async () => {
    const { app, logger } = build({ execute: async () => Promise.reject(new Error('boom at /srv/agent/src/x.ts:12')) });
    const response = await request(app).post('/webhooks/ci').send('{}');
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: 'Internal Server Error' });
    expect(response.text).not.toContain('boom');
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: 'error' }));
  });
});

/**
 * Sends raw bytes and returns everything the server answers until it closes the connection (as
 * it does after these answers), or 10 s pass: a deadline for a server that keeps it open.
 */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

/** POSTs exact bytes as application/json (superagent would re-encode a Buffer as JSON). */
function postBytes(port: number, path: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers },
    });
    req.on('response', async (response) => resolve(await readAnswer(response)));
    req.on('error', reject);
    req.end(body);
  });
}

interface Answer {
  status: number;
  body: string;
  sent: number;
}

function readAnswer(response: IncomingMessage): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    let body = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (body += chunk));
    response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    response.on('error', () => resolve({ status: response.statusCode ?? 0, body }));
  });
}

/** A chunked body written as fast as the server takes it, until it answers or `total` bytes are sent. */
function streamBody(port: number, path: string, chunkSize: number, total: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('response', async (response) => {
      answered = true;
      resolve({ ...(await readAnswer(response)), sent });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(chunkSize, 0x61);
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Declares `length` bytes, then sends one byte every `everyMs` until answered; `sent` is how many went. */
function trickle(port: number, path: string, length: number, everyMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    let sent = 0;
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(length) },
    });
    const timer = setInterval(() => {
      if (answered || req.destroyed || sent >= length) return;
      sent += 1;
      req.write('x');
    }, everyMs);
    req.on('response', async (response) => {
      answered = true;
      clearInterval(timer);
      resolve({ ...(await readAnswer(response)), sent });
      req.destroy();
    });
    req.on('error', (error) => {
      clearInterval(timer);
      if (!answered) reject(error);
    });
    req.flushHeaders();
  });
}
