import { sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import type { FireOutcome } from '../../../src/application/ports/SchedulerProvider.js';
import { createFireApp } from '../../../src/adapters/http/fireApp.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { FileUsedFireTokens } from '../../../src/adapters/persistence/FileUsedFireTokens.js';
import { closeWebhookServer, createWebhookServer, listenWebhookServer } from '../../../src/adapters/http/webhookServer.js';
import { JWKS_MIN_REFETCH_MS, JwtFireTokenVerifier } from '../../../src/adapters/security/JwtFireTokenVerifier.js';
import { InMemoryUsedFireTokens } from '../../support/fakes/InMemoryUsedFireTokens.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { FakePortal, nodeJwksFetcher } from '../../support/fakePortal.js';

const FIRE_AT = '2030-01-01T01:00:00.000Z';

describe('POST /api/cron/fire', () => {
  let portal: FakePortal;
  let clock: ManualClock;
  let log: RecordingLogger;
  let fires: Array<{ jobId: string; fireAt: string }>;
  let outcome: FireOutcome;
  let app: ReturnType<typeof createFireApp>;

  beforeAll(async () => {
    portal = await FakePortal.start();
  });
  afterAll(async () => {
    await portal.close();
  });
  beforeEach(() => {
    clock = new ManualClock(new Date());
    log = new RecordingLogger();
    fires = [];
    outcome = { status: 'accepted', jobId: 'job1' };
    portal.jwksMode = 'keys';
    const verifier = new JwtFireTokenVerifier(
      { jwksUrl: portal.jwksUrl, audience: portal.audience, issuer: portal.url },
      clock,
      log,
      new InMemoryUsedFireTokens(),
      nodeJwksFetcher(portal.jwksUrl),
    );
    app = createFireApp({
      verifier,
      fire: {
        execute: async (input) => {
          fires.push(input);
          return outcome;
        },
      },
      logger: log,
    });
  });

  const post = (token: string | null, body: Record<string, unknown> = { job_id: 'job1', fire_at: FIRE_AT }) => {
    const call = request(app).post('/api/cron/fire').set('content-type', 'application/json');
    if (token !== null) call.set('authorization', `Bearer ${token}`);
    return call.send(JSON.stringify(body));
  };

  describe('accepted tokens', () => {
    it.each(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const)(
      'takes %s with the RSA key and answers 202 accepted',
      async (algorithm) => {
        const response = await post(portal.mint('job1', { algorithm }));
        expect(response.status).toBe(202);
        expect(response.body).toEqual({ status: 'accepted', job_id: 'job1' });
        expect(fires).toEqual([{ jobId: 'job1', fireAt: FIRE_AT }]);
      },
    );

    it.each(['ec-256', 'ec-384'] as const)('takes the EC key %s', async (kid) => {
      expect((await post(portal.mint('job1', { kid }))).status).toBe(202);
    });

    it('answers gone and stale with 200, and 503 with Retry-After, as the slot came out', async () => {
      outcome = { status: 'gone' };
      expect(await post(portal.mint('job1'))).toMatchObject({ status: 200, body: { status: 'gone' } });
      outcome = { status: 'stale' };
      expect(await post(portal.mint('job1'))).toMatchObject({ status: 200, body: { status: 'stale' } });
      outcome = { status: 'unavailable', retryAfterSeconds: 5 };
      const token = portal.mint('job1');
      const unavailable = await post(token);
      expect(unavailable.status).toBe(503);
      expect(unavailable.headers['retry-after']).toBe('5');
      // Nothing was done: the same token may be sent again.
      outcome = { status: 'accepted', jobId: 'job1' };
      expect((await post(token)).status).toBe(202);
    });

    it('forgets the token of a fire answered 503 in the files too: a restarted gateway takes it, once', async () => {
      const home = await mkdtemp(join(tmpdir(), 'agent-fire-release-'));
      try {
        const gateway = () => {
          const used = new FileUsedFireTokens(agentPathsFor(home));
          const verifier = new JwtFireTokenVerifier(
            { jwksUrl: portal.jwksUrl, audience: portal.audience, issuer: portal.url },
            clock,
            log,
            used,
            nodeJwksFetcher(portal.jwksUrl),
          );
          return createFireApp({ verifier, fire: { execute: async (input) => (fires.push(input), outcome) }, logger: log });
        };
        const token = portal.mint('job1');
        outcome = { status: 'unavailable', retryAfterSeconds: 10 };
        app = gateway();
        expect((await post(token)).status).toBe(503);

        outcome = { status: 'accepted', jobId: 'job1' };
        app = gateway();
        expect((await post(token)).status).toBe(202);
        app = gateway();
        expect((await post(token)).status).toBe(401);
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    });

    it('takes a token bound to the slot fired', async () => {
      expect((await post(portal.mint('job1', { claims: { fire_at: FIRE_AT } }))).status).toBe(202);
    });

    it('answers 503 with Retry-After, and runs nothing, when the used tokens cannot be looked at', async () => {
      const used = new InMemoryUsedFireTokens();
      used.remember = async () => {
        throw new Error('disk gone');
      };
      const verifier = new JwtFireTokenVerifier(
        { jwksUrl: portal.jwksUrl, audience: portal.audience, issuer: portal.url },
        clock,
        log,
        used,
        nodeJwksFetcher(portal.jwksUrl),
      );
      app = createFireApp({ verifier, fire: { execute: async (input) => (fires.push(input), outcome) }, logger: log });

      const response = await post(portal.mint('job1'));

      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
      expect(fires).toEqual([]);
    });

    it("takes a token issued up to 30 s ahead of the gateway's clock (clock skew)", async () => {
      const token = portal.mint('job1');
      clock.advance(-20_000);

      expect((await post(token)).status).toBe(202);
    });

    it('answers 400 missing job_id to a valid token with a body without one', async () => {
      const response = await post(portal.mint('job1'), { fire_at: FIRE_AT });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: 'missing job_id' });
      expect(fires).toEqual([]);
    });
  });

  describe('the request itself', () => {
    it('takes a gzip-compressed body and one in another charset alike', async () => {
      const body = JSON.stringify({ job_id: 'job1', fire_at: FIRE_AT });
      const server = createWebhookServer(app);
      const { port } = await listenWebhookServer(server, '127.0.0.1', 0);
      const send = (headers: string, bytes: Buffer) =>
        new Promise<string>((resolve, reject) => {
          const head = `POST /api/cron/fire HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${portal.mint('job1')}\r\n${headers}Content-Length: ${bytes.length}\r\n\r\n`;
          const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.concat([Buffer.from(head, 'latin1'), bytes])));
          let text = '';
          socket.setEncoding('latin1');
          socket.on('data', (chunk: string) => (text += chunk));
          socket.on('close', () => resolve(text));
          socket.on('error', reject);
        });
      try {
        expect(await send('Content-Type: application/json\r\nContent-Encoding: gzip\r\n', gzipSync(body))).toMatch(/^HTTP\/1\.1 202 /);
        expect(await send('Content-Type: application/json; charset=iso-8859-1\r\n', Buffer.from(body, 'latin1'))).toMatch(
          /^HTTP\/1\.1 202 /,
        );
      } finally {
        await closeWebhookServer(server);
      }
      expect(fires).toEqual([
        { jobId: 'job1', fireAt: FIRE_AT },
        { jobId: 'job1', fireAt: FIRE_AT },
      ]);
    });

    it('answers 413 to a body over 16 KB, declared or not, and fires nothing', async () => {
      const big = { job_id: 'job1', fire_at: FIRE_AT, padding: 'x'.repeat(17 * 1024) };
      const declared = await post(portal.mint('job1'), big);
      expect(declared.status).toBe(413);
      expect(declared.body).toEqual({ error: 'Payload too large' });
      const server = createWebhookServer(app);
      const { port } = await listenWebhookServer(server, '127.0.0.1', 0);
      try {
        const chunked = await exchange(
          port,
          `POST /api/cron/fire HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${portal.mint('job1')}\r\nTransfer-Encoding: chunked\r\n\r\n` +
            `${(17 * 1024).toString(16)}\r\n${'x'.repeat(17 * 1024)}\r\n0\r\n\r\n`,
        );
        expect(chunked).toMatch(/^HTTP\/1\.1 413 /);
      } finally {
        await closeWebhookServer(server);
      }
      expect(fires).toEqual([]);
    });

    it('answers 405 with Allow: POST to another method', async () => {
      const response = await request(app).get('/api/cron/fire');
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
    });

    it('invites the body of `Expect: 100-continue` with 100 Continue, then answers the fire', async () => {
      const server = createWebhookServer(app);
      const { port } = await listenWebhookServer(server, '127.0.0.1', 0);
      try {
        const body = JSON.stringify({ job_id: 'job1', fire_at: FIRE_AT });
        const head =
          `POST /api/cron/fire HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\nAuthorization: Bearer ${portal.mint('job1')}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
        expect(await exchange(port, head, body)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 202 /);
      } finally {
        await closeWebhookServer(server);
      }
    });
  });

  describe('the attack matrix: each is 401 invalid fire token and nothing runs', () => {
    const refused = async (token: string | null, body?: Record<string, unknown>, authorization?: string) => {
      const call = post(token, body);
      if (authorization !== undefined) call.set('authorization', authorization);
      const response = await call;
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'invalid fire token' });
      expect(fires).toEqual([]);
      if (token) expect(JSON.stringify(log.entries)).not.toContain(token);
    };

    it('alg none', () => refused(portal.forge({ alg: 'none', typ: 'JWT', kid: 'rsa-1' }, portal.claims('job1'))));
    it('HS256 keyed with the public key', () =>
      refused(portal.forge({ alg: 'HS256', typ: 'JWT', kid: 'rsa-1' }, portal.claims('job1'), portal.hmacWithPublicKey('rsa-1'))));
    it('a wrong audience', () => refused(portal.mint('job1', { claims: { aud: 'someone-else' } })));
    it('a wrong issuer', () => refused(portal.mint('job1', { claims: { iss: 'https://evil.example.com' } })));
    it('no purpose', () => refused(portal.mint('job1', { claims: { purpose: undefined } })));
    it('another purpose', () => refused(portal.mint('job1', { claims: { purpose: 'login' } })));
    it('expired (beyond the 30 s leeway)', () => {
      const now = Math.floor(Date.now() / 1000);
      return refused(portal.mint('job1', { claims: { iat: now - 200, exp: now - 31 } }));
    });
    it('no exp', () => refused(portal.mint('job1', { claims: { exp: undefined } })));
    it('no iat', async () => {
      // jsonwebtoken's sign always adds an iat: this one is signed by hand, with the real key.
      const claims = portal.claims('job1', { iat: undefined });
      await refused(
        portal.forge({ alg: 'RS256', typ: 'JWT', kid: 'rsa-1' }, claims, (input) =>
          sign('sha256', Buffer.from(input), portal.keys['rsa-1'].privateKey),
        ),
      );
      expect(log.entries).toContainEqual(expect.objectContaining({ message: expect.stringContaining('it has no iat') }));
    });
    it("iat more than 30 s ahead of the gateway's clock", async () => {
      const token = portal.mint('job1');
      clock.advance(-31_000);
      await refused(token);
      expect(log.entries).toContainEqual(expect.objectContaining({ message: expect.stringContaining('its iat is more than 30 s ahead') }));
    });
    it('iat a year ahead, exp a minute after it', () => {
      const later = Math.floor(clock.now().getTime() / 1000) + 365 * 24 * 3600;
      return refused(portal.mint('job1', { claims: { iat: later, exp: later + 60 } }));
    });
    it('exp more than 5 minutes after iat', () => {
      const now = Math.floor(Date.now() / 1000);
      return refused(portal.mint('job1', { claims: { iat: now, exp: now + 301 } }));
    });
    it('nbf in the future', () => refused(portal.mint('job1', { claims: { nbf: Math.floor(Date.now() / 1000) + 120 } })));
    it('an unknown kid', () => refused(portal.mint('job1', { kid: 'rsa-unknown', keyOf: 'rsa-1' })));
    it("a key of the JWKS used under another key's kid", () =>
      refused(portal.mint('job1', { kid: 'ec-256', keyOf: 'rsa-1', algorithm: 'RS256' })));
    it('a tampered payload', () => {
      const [header, , signature] = portal.mint('job1').split('.');
      const payload = Buffer.from(JSON.stringify(portal.claims('job2'))).toString('base64url');
      return refused(`${header}.${payload}.${signature}`, { job_id: 'job2', fire_at: FIRE_AT });
    });
    it('a replayed jti', async () => {
      const token = portal.mint('job1');
      expect((await post(token)).status).toBe(202);
      fires = [];
      await refused(token);
    });
    it('a token bound to another job', () => refused(portal.mint('job2')));
    it('a token bound to another slot', () => refused(portal.mint('job1', { claims: { fire_at: '2030-01-01T02:00:00.000Z' } })));
    it('no Authorization', () => refused(null));
    it('a malformed Authorization', () => refused(null, undefined, `Basic ${Buffer.from('a:b').toString('base64')}`));
    it('a bearer that is no token', () => refused('not.a.token'));
  });

  describe('the JWKS', () => {
    it('a JWKS URL that fails or serves garbage refuses with 401 and keeps serving', async () => {
      portal.jwksMode = 'error';
      expect((await post(portal.mint('job1'))).status).toBe(401);
      clock.advance(JWKS_MIN_REFETCH_MS);
      portal.jwksMode = 'garbage';
      expect((await post(portal.mint('job1'))).status).toBe(401);
      expect(log.entries.filter((entry) => /JWKS .* could not be fetched or read/.test(entry.message))).toHaveLength(2);
      clock.advance(JWKS_MIN_REFETCH_MS);
      portal.jwksMode = 'keys';
      expect((await post(portal.mint('job1'))).status).toBe(202);
    });

    it('leaves out a key of the JWKS that cannot be read, with a warning, and keeps the others', async () => {
      const rsa = portal.keys['rsa-1'].publicKey.export({ format: 'pem', type: 'spki' }).toString();
      const fetcher = async () =>
        new Map([
          ['rsa-1', rsa],
          ['ec-256', 'not a key at all'],
        ]);
      const verifier = new JwtFireTokenVerifier(
        { jwksUrl: portal.jwksUrl, audience: portal.audience, issuer: portal.url },
        clock,
        log,
        new InMemoryUsedFireTokens(),
        fetcher,
      );
      app = createFireApp({ verifier, fire: { execute: async (input) => (fires.push(input), outcome) }, logger: log });

      expect((await post(portal.mint('job1', { kid: 'ec-256' }))).status).toBe(401);
      expect((await post(portal.mint('job1'))).status).toBe(202);
      expect(log.entries).toContainEqual(
        expect.objectContaining({ level: 'warn', message: expect.stringMatching(/the key ec-256 of the JWKS .* cannot be read/) }),
      );
      expect(log.entries).toContainEqual(
        expect.objectContaining({ message: expect.stringContaining('its key ec-256 is not in the JWKS') }),
      );
    });

    it('fetches the JWKS once for many fires, and an unknown kid at most once per interval', async () => {
      const before = portal.jwksRequests;
      for (let i = 0; i < 3; i += 1) expect((await post(portal.mint('job1'))).status).toBe(202);
      expect(portal.jwksRequests - before).toBe(1);
      for (let i = 0; i < 5; i += 1) expect((await post(portal.mint('job1', { kid: `forged-${i}`, keyOf: 'rsa-1' }))).status).toBe(401);
      expect(portal.jwksRequests - before).toBe(1);
      clock.advance(JWKS_MIN_REFETCH_MS);
      expect((await post(portal.mint('job1', { kid: 'forged-x', keyOf: 'rsa-1' }))).status).toBe(401);
      expect(portal.jwksRequests - before).toBe(2);
    });
  });
});

/** Sends `head` on a raw connection, then `body` once the server answers 100 Continue; everything answered. */
function exchange(port: number, head: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      const before = text;
      text += chunk;
      if (body !== undefined && !before.includes('100 Continue') && text.includes('100 Continue')) socket.write(body);
      if (body === undefined && /\r\n\r\n\{.*\}$/s.test(text)) socket.end();
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}
