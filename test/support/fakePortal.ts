import { createHmac, createPublicKey, generateKeyPairSync, randomUUID, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';

/**
 * A fake portal on 127.0.0.1 for the managed trigger (docs/managed-trigger.md).
 *
 * The fire side: it serves a JWKS (`jwksUrl`) of keys generated here (`rsa-1` RSA 2048, `ec-256`
 * P-256, `ec-384` P-384), mints fire tokens (`mint`), forges bad ones (`forge`) and fires a
 * gateway's callback (`fire`). `jwksMode` makes the JWKS fail (500) or serve garbage;
 * `jwksRequests` counts its fetches.
 *
 * The provider side: `POST /api/agent-cron/provision`, `POST /api/agent-cron/cancel` and
 * `GET /api/agent-cron/list`, each checking `Authorization: Bearer <schedulerToken>` (401
 * otherwise) and recorded in `calls`; `armed` holds one fire per job, as the real portal does.
 * `failNext` makes the next call answer a status (e.g. 503, 403) or drop its connection;
 * `answerWith` makes every call answer a status until reset to null.
 */
export class FakePortal {
  /** The portal's base URL, also the `iss` of its tokens (cron.managed.portal_url). */
  readonly url: string;
  readonly jwksUrl: string;
  /** cron.managed.expected_audience. */
  readonly audience = 'agent-gateway-test';
  jwksMode: 'keys' | 'error' | 'garbage' = 'keys';
  jwksRequests = 0;
  /** The AGENT_CRON_SCHEDULER_TOKEN the provider side expects (`schedulerToken` is the same). */
  readonly token = 'scheduler-token-for-tests';
  readonly schedulerToken = this.token;
  /** Every provision, cancel and list call, in order (bodies as sent; list: null). */
  readonly calls: SchedulerCall[] = [];
  /** job_id → the one fire armed for it, as the real portal keeps it. */
  readonly armed = new Map<string, ArmedFire>();
  /** When set, every provision, cancel and list call answers this status (after being recorded). */
  answerWith: number | null = null;
  private failures: Array<number | 'drop'> = [];
  readonly keys: Record<SigningKeyId, SigningKeyPair>;

  private constructor(private readonly server: Server) {
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.jwksUrl = `${this.url}/jwks.json`;
    this.keys = {
      'rsa-1': { alg: 'RS256', ...generateKeyPairSync('rsa', { modulusLength: 2048 }) },
      'ec-256': { alg: 'ES256', ...generateKeyPairSync('ec', { namedCurve: 'P-256' }) },
      'ec-384': { alg: 'ES384', ...generateKeyPairSync('ec', { namedCurve: 'P-384' }) },
    };
  }

  static async start(): Promise<FakePortal> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const portal = new FakePortal(server);
    server.on('request', (request, response) => portal.serve(request, response));
    return portal;
  }

  /** The `cron.managed` settings that trust this portal. */
  managedSettings(callbackUrl = 'http://127.0.0.1:1'): Record<string, string> {
    return { portal_url: this.url, callback_url: callbackUrl, expected_audience: this.audience, jwks_url: this.jwksUrl };
  }

  /**
   * A valid fire token for `jobId`, as the portal mints it: `kid` rsa-1 with RS256 unless told,
   * `iss` this portal, `aud` the audience, `purpose` cron_fire, issued now, expiring in 60 s, a
   * fresh `jti`. `claims` overrides or adds claims (a claim set to undefined is left out).
   */
  mint(jobId: string, options: MintOptions = {}): string {
    const kid = options.kid ?? 'rsa-1';
    const pair = this.keys[options.keyOf ?? (kid as SigningKeyId)] ?? this.keys['rsa-1'];
    const payload = this.claims(jobId, options.claims);
    return jwt.sign(payload, pair.privateKey, { algorithm: options.algorithm ?? pair.alg, keyid: kid });
  }

  /** The claims `mint` signs, for tokens built by hand. */
  claims(jobId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: this.url,
      aud: this.audience,
      purpose: 'cron_fire',
      job_id: jobId,
      iat: now,
      exp: now + 60,
      jti: randomUUID(),
      ...overrides,
    };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    return claims;
  }

  /** A token built by hand: `header` and `payload` as given, signed by `sign` (empty: no signature). */
  forge(
    header: Record<string, unknown>,
    payload: Record<string, unknown>,
    sign: (signingInput: string) => Buffer = () => Buffer.alloc(0),
  ): string {
    const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
    return `${signingInput}.${sign(signingInput).toString('base64url')}`;
  }

  /** HS256 keyed with the public key of `kid`, as it appears in PEM: the classic algorithm confusion. */
  hmacWithPublicKey(kid: SigningKeyId): (signingInput: string) => Buffer {
    const pem = this.keys[kid].publicKey.export({ format: 'pem', type: 'spki' });
    return (signingInput) => createHmac('sha256', pem).update(signingInput).digest();
  }

  /** Fires `{job_id, fire_at}` at `callbackUrl` + /api/cron/fire with `token` (none: no Authorization). */
  async fire(
    callbackUrl: string,
    body: { job_id?: string; fire_at?: string },
    token?: string | { authorization: string },
  ): Promise<FireAnswer> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (typeof token === 'string') headers.authorization = `Bearer ${token}`;
    else if (token) headers.authorization = token.authorization;
    const response = await fetch(`${callbackUrl}/api/cron/fire`, { method: 'POST', headers, body: JSON.stringify(body) });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      retryAfter: response.headers.get('retry-after'),
    };
  }

  /** What the real portal does when an armed fire is due: fires it at its callback_url with a fresh token. */
  async fireArmed(jobId: string): Promise<FireAnswer & { fire_at: string }> {
    const armed = this.armed.get(jobId);
    if (!armed) throw new Error(`the fake portal holds no armed fire for job ${jobId}; armed: ${JSON.stringify([...this.armed.keys()])}`);
    const base = armed.callback_url.replace(/\/api\/cron\/fire$/, '');
    return { ...(await this.fire(base, { job_id: jobId, fire_at: armed.fire_at }, this.mint(jobId))), fire_at: armed.fire_at };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(request: IncomingMessage, response: ServerResponse): void {
    const path = new URL(request.url ?? '/', this.url).pathname;
    if (request.method === 'GET' && path === '/jwks.json') {
      this.jwksRequests += 1;
      if (this.jwksMode === 'error') response.writeHead(500, { 'content-type': 'text/plain' }).end('down');
      else if (this.jwksMode === 'garbage') response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": "not a list"');
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.jwks()));
      return;
    }
    if (path.startsWith('/api/agent-cron/')) {
      void this.serveScheduler(path, request, response);
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  }

  /** The calls of one kind, in order. */
  callsOf(kind: SchedulerCall['kind']): SchedulerCall[] {
    return this.calls.filter((call) => call.kind === kind);
  }

  /** The next provision, cancel or list call answers `status`, or has its connection dropped. */
  failNext(failure: number | 'drop'): void {
    this.failures.push(failure);
  }

  /** Resolves once `condition` holds; rejects after `timeoutMs` (polls, no fixed sleep). */
  async until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline)
        throw new Error(`the fake portal did not reach the expected state within ${timeoutMs} ms; calls: ${JSON.stringify(this.calls)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private async serveScheduler(path: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text === '' ? null : (JSON.parse(text) as Record<string, unknown>);
    const authorized = request.headers.authorization === `Bearer ${this.token}`;
    const kind = path.slice('/api/agent-cron/'.length) as SchedulerCall['kind'];
    this.calls.push({ kind, path, body, authorized });
    const answer = (status: number, json: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    const failure = this.failures.shift();
    if (failure === 'drop') return void request.socket.destroy();
    if (failure !== undefined) return void answer(failure, { error: 'failing as told' });
    if (!authorized) return void answer(401, { error: 'unauthorized' });
    if (this.answerWith !== null) return void answer(this.answerWith, { error: 'failing as told' });
    if (request.method === 'POST' && kind === 'provision' && body) {
      const fire: ArmedFire = {
        job_id: String(body.job_id),
        fire_at: String(body.fire_at),
        callback_url: String(body.callback_url),
        dedup_key: String(body.dedup_key),
        schedule_id: `schedule-${randomUUID()}`,
      };
      this.armed.set(fire.job_id, fire);
      return void answer(200, { schedule_id: fire.schedule_id });
    }
    if (request.method === 'POST' && kind === 'cancel' && body) {
      this.armed.delete(String(body.job_id));
      return void answer(200, {});
    }
    if (request.method === 'GET' && kind === 'list') {
      return void answer(200, {
        armed: [...this.armed.values()].map(({ job_id, fire_at, schedule_id }) => ({ job_id, fire_at, schedule_id })),
      });
    }
    answer(404, { error: 'not found' });
  }

  private jwks(): { keys: Array<Record<string, unknown>> } {
    return {
      keys: Object.entries(this.keys).map(([kid, pair]) => ({
        ...pair.publicKey.export({ format: 'jwk' }),
        kid,
        alg: pair.alg,
        use: 'sig',
      })),
    };
  }
}

export type SigningKeyId = 'rsa-1' | 'ec-256' | 'ec-384';

export interface SigningKeyPair {
  alg: 'RS256' | 'ES256' | 'ES384';
  publicKey: KeyObject;
  privateKey: KeyObject;
}

export interface SchedulerCall {
  kind: 'provision' | 'cancel' | 'list';
  /** The same, as a path: /api/agent-cron/<kind>. */
  path: string;
  body: Record<string, unknown> | null;
  authorized: boolean;
}

export interface ArmedFire {
  job_id: string;
  fire_at: string;
  callback_url: string;
  dedup_key: string;
  schedule_id: string;
}

export interface MintOptions {
  /** The `kid` in the header; default rsa-1. */
  kid?: string;
  /** Whose private key signs; default the key `kid` names. */
  keyOf?: SigningKeyId;
  /** Default the key's own (RS256 for rsa-1); PS256/384/512 and RS384/512 work with rsa-1. */
  algorithm?: jwt.Algorithm;
  claims?: Record<string, unknown>;
}

export interface FireAnswer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/**
 * Fetches a JWKS and turns its keys into PEM with node:crypto: what jwks-rsa does, for jest, which
 * cannot load jwks-rsa's ES-module dependency (the end-to-end tests run jwks-rsa itself).
 */
export function nodeJwksFetcher(url: string): () => Promise<Map<string, string>> {
  return async () => {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`the JWKS answered ${response.status}`);
    const { keys } = (await response.json()) as { keys: Array<Record<string, unknown>> };
    if (!Array.isArray(keys)) throw new Error('the JWKS has no list of keys');
    return new Map(
      keys.map((jwk) => [
        String(jwk.kid),
        createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
          .export({ format: 'pem', type: 'spki' })
          .toString(),
      ]),
    );
  };
}
