import { createHmac } from 'node:crypto';
import { seededRandom } from '../../support/seededRandom.js';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { aRoute } from '../../support/fakes/FakeWebhookRoutes.js';
import { startWebhookListener, type WebhookListener } from '../../support/webhookListener.js';

/**
 * 10,000 random requests — methods, paths, headers, bodies, some correctly signed — against the
 * real listener on 127.0.0.1, then some random bytes that are not HTTP at all. Whatever arrives,
 * the answer is never a 5xx and the listener still answers /health. Seeded, so a failure
 * reproduces; connections are kept alive and requests run 32 at a time to stay fast.
 */
const SEED = 0x5eed_cafe;
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const PARALLEL = 32;
const RAW_CONNECTIONS = 200;
const MAX_BODY = 4096;

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  chunked: boolean;
}

function generator(random: () => number, now: () => Date) {
  const int = (below: number) => Math.floor(random() * below);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => random() < p;
  // Characters Node lets through in a header value: tab, printable ASCII and Latin-1.
  const headerText = (max: number) =>
    Array.from({ length: int(max) }, () => {
      const code = int(3) === 0 ? 0x80 + int(0x80) : 0x20 + int(0x5f);
      return String.fromCharCode(code);
    }).join('');
  const token = (max: number) => Array.from({ length: 1 + int(max) }, () => pick([...'abcdefghijklmnopqrstuvwxyz0123456789-_'])).join('');
  const bytes = (length: number) => Buffer.from(Array.from({ length }, () => int(256)));

  const jsonValue = (depth: number): unknown => {
    switch (depth > 3 ? int(4) : int(7)) {
      case 0:
        return int(1000) - 500;
      case 1:
        return headerText(20);
      case 2:
        return chance(0.5);
      case 3:
        return null;
      case 4:
        return Array.from({ length: int(4) }, () => jsonValue(depth + 1));
      default:
        return Object.fromEntries(
          Array.from({ length: int(4) }, () => [
            pick(['action', 'type', 'number', '__proto__', 'constructor', token(8)]),
            jsonValue(depth + 1),
          ]),
        );
    }
  };

  const body = (): Buffer => {
    switch (int(10)) {
      case 0:
        return Buffer.alloc(0);
      case 1:
        return bytes(int(300));
      case 2:
        return Buffer.from(JSON.stringify([jsonValue(0)]));
      case 3:
        return Buffer.from(`payload=${encodeURIComponent(JSON.stringify(jsonValue(0)))}&x=${token(5)}`);
      case 4:
        return Buffer.from(`${'{"a":'.repeat(300 + int(500))}1${'}'.repeat(int(800))}`);
      case 5:
        return Buffer.alloc(MAX_BODY + 1 + int(3 * MAX_BODY), 0x7b);
      case 6:
        return Buffer.concat([Buffer.from('{"t":"'), bytes(int(40)), Buffer.from('"}')]);
      default:
        return Buffer.from(JSON.stringify({ action: pick(['opened', 'closed']), ...(jsonValue(0) as object) }));
    }
  };

  const path = (): string => {
    switch (int(12)) {
      case 0:
        return '/health';
      case 1:
        return pick(['/', '/webhooks', '/webhooks/', '/api/cron/fire', `/${token(20)}`]);
      case 2:
        return `/webhooks/${pick(['%E0%A4%A', '%00', '%ff%fe', '..%2F..%2Fetc', '%2e%2e', 'ci%2Fx'])}`;
      case 3:
        return `/webhooks/${token(2000)}`;
      case 4:
        return `/webhooks/${token(10)}?${token(30)}=${token(30)}`;
      case 5:
        return `/webhooks/ci/${token(5)}`;
      default:
        return `/webhooks/${pick(['ci', 'prs', 'dev', 'stripe', 'standard', 'CI'])}`;
    }
  };

  const sign = (headers: Record<string, string>, payload: Buffer) => {
    const seconds = Math.floor(now().getTime() / 1000) + pick([0, 0, 0, -400, 400]);
    switch (int(5)) {
      case 0:
        headers['x-hub-signature-256'] = `sha256=${createHmac('sha256', 's3cret').update(payload).digest('hex')}`;
        break;
      case 1:
        headers[pick(['x-gitlab-token', 'x-hostb-token'])] = 's3cret';
        break;
      case 2: {
        const id = `msg_${token(10)}`;
        headers['webhook-id'] = id;
        headers['webhook-timestamp'] = String(seconds);
        const mac = createHmac('sha256', 's3cret').update(`${id}.${seconds}.`).update(payload).digest('base64');
        headers['webhook-signature'] = `v1,${mac}`;
        break;
      }
      case 3: {
        const mac = createHmac('sha256', 's3cret').update(`${seconds}.`).update(payload).digest('hex');
        headers['stripe-signature'] = `t=${seconds},v1=${mac}`;
        break;
      }
      default:
        headers.authorization = 'Bearer s3cret';
    }
  };

  const garbageHeaders = (headers: Record<string, string>) => {
    for (const name of [
      'x-hub-signature-256',
      'x-gitlab-token',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'stripe-signature',
      'authorization',
      'x-github-event',
      'x-gitlab-event',
      'x-github-delivery',
      'x-request-id',
      'content-type',
      `x-${token(10)}`,
    ]) {
      if (chance(0.15)) headers[name] = headerText(chance(0.05) ? 4000 : 80);
    }
    if (chance(0.05)) headers['x-padding'] = 'p'.repeat(20_000);
  };

  return (): FuzzRequest => {
    const method = chance(0.75) ? 'POST' : pick(['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
    const payload = body();
    const headers: Record<string, string> = {};
    if (chance(0.8))
      headers['content-type'] = pick([
        'application/json',
        'application/json; charset=utf-8',
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
        headerText(30),
      ]);
    if (chance(0.5))
      headers[pick(['x-github-event', 'x-hosta-event', 'x-gitlab-event', 'x-hostb-event'])] = pick([
        'push',
        'pull_request',
        'ping',
        'Push Hook',
        headerText(20),
      ]);
    if (chance(0.5)) headers[pick(['x-github-delivery', 'x-hosta-delivery', 'x-request-id'])] = pick(['d-1', 'd-2', token(36)]);
    if (chance(0.4)) sign(headers, payload);
    garbageHeaders(headers);
    return { method, path: path(), headers, body: payload, chunked: chance(0.2) };
  };
}

type Outcome = { status: number } | { error: string };

function send(agent: Agent, port: number, fuzz: FuzzRequest): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const bodyless = fuzz.method === 'GET' || fuzz.method === 'HEAD';
    const headers = fuzz.chunked || bodyless ? fuzz.headers : { ...fuzz.headers, 'content-length': String(fuzz.body.length) };
    let req;
    try {
      req = httpRequest({ agent, host: '127.0.0.1', port, method: fuzz.method, path: fuzz.path, headers, timeout: 10_000 });
    } catch (error) {
      return done({ error: `client refused to send: ${(error as Error).message}` });
    }
    req.on('response', (response) => {
      response.resume();
      response.on('end', () => done({ status: response.statusCode ?? 0 }));
      response.on('error', () => done({ status: response.statusCode ?? 0 }));
    });
    req.on('timeout', () => {
      req.destroy();
      done({ error: 'timeout' });
    });
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    if (bodyless) req.end();
    else req.end(fuzz.body);
  });
}

function rawGarbage(port: number, data: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(data));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}

describe('webhook listener fuzzing', () => {
  let listener: WebhookListener;

  beforeAll(async () => {
    listener = await startWebhookListener({
      routes: [
        aRoute('ci'),
        aRoute('prs', { events: ['pull_request'], filters: [{ field: 'action', in: ['opened'] }] }),
        aRoute('dev', { secrets: { kind: 'insecure_no_auth' } }),
        aRoute('stripe', { secrets: { kind: 'secrets', values: ['whsec_x', 's3cret'] } }),
        aRoute('standard', { prompt: '{action} {__raw__}' }),
      ],
      settings: { maxBodyBytes: MAX_BODY, bodyReadTimeoutMs: 5_000 },
    });
  });

  afterAll(async () => {
    await listener.close();
  });

  it(`never answers ${REQUESTS} random requests with a 5xx, and still answers /health`, async () => {
    const random = seededRandom(SEED);
    const next = generator(random, () => listener.clock.now());
    const agent = new Agent({ keepAlive: true, maxSockets: PARALLEL });
    const statuses = new Map<number, number>();
    const errors = new Map<string, number>();
    const serverErrors: Array<{ request: Omit<FuzzRequest, 'body'> & { bodyBytes: number }; status: number }> = [];

    for (let sent = 0; sent < REQUESTS; sent += PARALLEL) {
      // Let the rate-limit window move on now and then, so signed requests keep getting through.
      if (sent % 640 === 0) listener.clock.advance(61_000);
      const batch = Array.from({ length: Math.min(PARALLEL, REQUESTS - sent) }, () => next());
      const outcomes = await Promise.all(batch.map((fuzz) => send(agent, listener.port, fuzz)));
      outcomes.forEach((outcome, index) => {
        if ('status' in outcome) {
          statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
          if (outcome.status >= 500 || outcome.status < 100) {
            const { body, ...request } = batch[index]!;
            serverErrors.push({ request: { ...request, bodyBytes: body.length }, status: outcome.status });
          }
        } else {
          errors.set(outcome.error, (errors.get(outcome.error) ?? 0) + 1);
        }
      });
    }
    agent.destroy();
    if (process.env.FUZZ_DEBUG) console.log(Object.fromEntries(statuses), Object.fromEntries(errors));

    expect(serverErrors.slice(0, 5)).toEqual([]);
    // A connection cut after an early answer may reach the client before the answer does; rare.
    const answered = [...statuses.values()].reduce((sum, count) => sum + count, 0);
    expect(errors.get('timeout') ?? 0).toBe(0);
    expect(answered).toBeGreaterThan(REQUESTS * 0.97);
    for (const status of [200, 202, 400, 401, 404, 405, 413, 429, 431]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);

    const garbage = seededRandom(SEED + 1);
    for (let i = 0; i < RAW_CONNECTIONS; i += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => {
          const length = 1 + Math.floor(garbage() * 600);
          const prefix = garbage() < 0.5 ? 'POST /webhooks/ci HTTP/1.1\r\n' : '';
          const data = Buffer.concat([Buffer.from(prefix), Buffer.from(Array.from({ length }, () => Math.floor(garbage() * 256)))]);
          return rawGarbage(listener.port, data);
        }),
      );
      for (const answer of answers) expect(answer).not.toMatch(/^HTTP\/1\.[01] 5/);
    }

    const health = await send(new Agent(), listener.port, {
      method: 'GET',
      path: '/health',
      headers: {},
      body: Buffer.alloc(0),
      chunked: false,
    });
    expect(health).toEqual({ status: 200 });
  }, 240_000);
});
