import { InMemoryWebhookRateLimiter } from '../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { AcceptWebhook, type AcceptWebhookInput } from '../../src/application/webhook/AcceptWebhook.js';
import { WebhookAdmission } from '../../src/application/webhook/WebhookAdmission.js';
import type { RateDecision } from '../../src/application/ports/WebhookRateLimiter.js';
import { DEFAULT_WEBHOOK_LISTENER_SETTINGS } from '../../src/application/ports/WebhookSettings.js';
import type { WebhookEvent } from '../../src/domain/webhook/WebhookEvent.js';
import type { WebhookRoute } from '../../src/domain/webhook/WebhookRoute.js';
import { FakeSignatureVerifier } from '../support/fakes/FakeSignatureVerifier.js';
import { aRoute } from '../support/fakes/FakeWebhookRoutes.js';
import { InMemoryWebhookInbox } from '../support/fakes/InMemoryWebhookInbox.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { SequentialIds } from '../support/fakes/SequentialIds.js';

const T0 = '2026-11-22T10:00:00.000Z';

/** An inbox whose next `failures` accepts fail, as a full disk would. */
class FlakyInbox extends InMemoryWebhookInbox {
  failures = 0;

  override async accept(event: WebhookEvent, payloadJson?: string, deliveryKey?: string): Promise<boolean> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('ENOSPC: no space left on device');
    }
    return super.accept(event, payloadJson, deliveryKey);
  }
}

/** A rate limiter whose next `failures` takes fail, as one whose database is away would. */
class FlakyRateLimiter extends InMemoryWebhookRateLimiter {
  failures = 0;

  override async take(route: string, limit: number, now: Date): Promise<RateDecision> {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('Cannot use the database db:5432/agent: nothing listens there');
    }
    return super.take(route, limit, now);
  }
}

function setUp(rateLimitPerMinute = 30) {
  const inbox = new FlakyInbox();
  const rateLimiter = new FlakyRateLimiter();
  const clock = new ManualClock(T0);
  const logger = new RecordingLogger();
  const verifier = new FakeSignatureVerifier();
  const admission = new WebhookAdmission(verifier, rateLimiter, logger, { ...DEFAULT_WEBHOOK_LISTENER_SETTINGS, rateLimitPerMinute });
  const accept = new AcceptWebhook(admission, inbox, clock, new SequentialIds(), logger);
  const stored = async () => {
    const events: WebhookEvent[] = [];
    for (let event = await inbox.claimNext(); event; event = await inbox.claimNext()) events.push(event);
    return events;
  };
  return { inbox, rateLimiter, clock, logger, verifier, accept, stored };
}

function post(
  route: WebhookRoute,
  options: { body?: string | Uint8Array; headers?: Record<string, string>; contentType?: string | null } = {},
): AcceptWebhookInput {
  const body = options.body ?? '{"action":"opened"}';
  return {
    route,
    rawBody: typeof body === 'string' ? Buffer.from(body) : body,
    headers: { 'x-test-signature': 's3cret', ...options.headers },
    contentType: options.contentType === undefined ? 'application/json' : options.contentType,
  };
}

const unsigned = { 'x-test-signature': 'wrong' };

describe('AcceptWebhook', () => {
  it('stores an authenticated event and answers accepted with the route, event, delivery id and event id', async () => {
    const { accept, stored } = setUp();
    const route = aRoute('ci');
    const result = await accept.execute(
      post(route, { headers: { 'x-github-event': 'pull_request', 'x-github-delivery': 'd-1' }, body: '{"action":"opened","number":7}' }),
    );
    expect(result).toEqual({ kind: 'accepted', route: 'ci', event: 'pull_request', deliveryId: 'd-1', eventId: '000000000001' });
    expect(await stored()).toEqual([
      {
        id: '000000000001',
        route: 'ci',
        event: 'pull_request',
        deliveryId: 'd-1',
        payload: { action: 'opened', number: 7 },
        receivedAt: T0,
      },
    ]);
  });

  it("checks the signature against the route's secrets, every one of a rotation list", async () => {
    const { accept, verifier } = setUp();
    const route = aRoute('ci', { secrets: { kind: 'secrets', values: ['new', 'old'] } });
    expect((await accept.execute(post(route, { headers: { 'x-test-signature': 'old' } }))).kind).toBe('accepted');
    expect(verifier.checks[0]!.secrets).toEqual(['new', 'old']);
    expect(Buffer.from(verifier.checks[0]!.request.rawBody).toString()).toBe('{"action":"opened"}');
  });

  it('refuses a bad signature and stores nothing', async () => {
    const { accept, inbox, logger } = setUp();
    const result = await accept.execute(post(aRoute('ci'), { headers: unsigned }));
    expect(result).toEqual({ kind: 'refused_signature' });
    expect(await inbox.pending()).toBe(0);
    expect(JSON.stringify(logger.entries)).not.toContain('s3cret');
    expect(JSON.stringify(logger.entries)).not.toContain('wrong');
  });

  it('skips the check for a route with INSECURE_NO_AUTH', async () => {
    const { accept, verifier } = setUp();
    const route = aRoute('dev', { secrets: { kind: 'insecure_no_auth' } });
    expect((await accept.execute(post(route, { headers: {} }))).kind).toBe('accepted');
    expect(verifier.checks).toEqual([]);
  });

  describe('rate limit', () => {
    it('refuses a request over the limit with the seconds to wait, and lets requests through again after the window', async () => {
      const { accept, clock } = setUp(2);
      const route = aRoute('ci');
      expect((await accept.execute(post(route))).kind).toBe('accepted');
      clock.advance(15_000);
      expect((await accept.execute(post(route))).kind).toBe('accepted');
      clock.advance(15_000);
      expect(await accept.execute(post(route))).toEqual({ kind: 'rate_limited', retryAfterSeconds: 30 });
      clock.advance(30_000);
      expect((await accept.execute(post(route))).kind).toBe('accepted');
    });

    it('counts only requests that passed authentication, and a bad signature over the limit is still refused for its signature', async () => {
      const { accept } = setUp(2);
      const route = aRoute('ci');
      for (let i = 0; i < 5; i += 1) expect((await accept.execute(post(route, { headers: unsigned }))).kind).toBe('refused_signature');
      expect((await accept.execute(post(route))).kind).toBe('accepted');
      expect((await accept.execute(post(route))).kind).toBe('accepted');
      expect((await accept.execute(post(route, { headers: unsigned }))).kind).toBe('refused_signature');
      expect((await accept.execute(post(route))).kind).toBe('rate_limited');
    });

    it('counts each route separately', async () => {
      const { accept } = setUp(1);
      expect((await accept.execute(post(aRoute('a')))).kind).toBe('accepted');
      expect((await accept.execute(post(aRoute('b')))).kind).toBe('accepted');
      expect((await accept.execute(post(aRoute('a')))).kind).toBe('rate_limited');
    });

    it('comes before the body: a malformed body over the limit is rate limited, and a malformed body counts', async () => {
      const { accept } = setUp(1);
      const route = aRoute('ci');
      expect((await accept.execute(post(route, { body: 'nope' }))).kind).toBe('malformed_body');
      expect((await accept.execute(post(route, { body: 'nope' }))).kind).toBe('rate_limited');
    });
  });

  describe('Content-Type', () => {
    const TAKEN = ['application/json', 'application/*+json', 'application/x-www-form-urlencoded'];

    it('refuses a type the route does not take, or none, after the signature and the rate limit, storing nothing', async () => {
      const { accept, inbox } = setUp(2);
      const route = aRoute('ci');
      expect(await accept.execute(post(route, { contentType: 'text/plain; charset=utf-8' }))).toEqual({
        kind: 'unsupported_media_type',
        mediaType: 'text/plain',
        accepted: TAKEN,
      });
      expect(await accept.execute(post(route, { contentType: null }))).toEqual({
        kind: 'unsupported_media_type',
        mediaType: null,
        accepted: TAKEN,
      });
      expect((await accept.execute(post(route, { contentType: 'text/plain', headers: unsigned }))).kind).toBe('refused_signature');
      expect((await accept.execute(post(route, { contentType: 'text/plain' }))).kind).toBe('rate_limited');
      expect(await inbox.pending()).toBe(0);
    });

    it('takes the types the route lists, and says so when refusing another', async () => {
      const { accept, stored } = setUp();
      const route = aRoute('alerts', { contentTypes: ['text/plain'] });
      expect((await accept.execute(post(route, { contentType: 'text/plain', body: 'disk full' }))).kind).toBe('accepted');
      expect(await accept.execute(post(route, { contentType: 'application/xml' }))).toEqual({
        kind: 'unsupported_media_type',
        mediaType: 'application/xml',
        accepted: [...TAKEN, 'text/plain'],
      });
      expect((await stored()).map((event) => event.payload)).toEqual([{ body: 'disk full' }]);
    });
  });

  describe('body', () => {
    it.each([
      ['not JSON', 'nope'],
      ['a JSON list', '[1,2]'],
      ['a JSON string', '"x"'],
      ['not UTF-8', Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])],
    ])('refuses %s as a malformed body, after a valid signature', async (_name, body) => {
      const { accept, inbox } = setUp();
      expect(await accept.execute(post(aRoute('ci'), { body }))).toEqual({ kind: 'malformed_body' });
      expect(await inbox.pending()).toBe(0);
    });

    it("takes the JSON of a form body's payload field", async () => {
      const { accept, stored } = setUp();
      const body = `payload=${encodeURIComponent('{"zen":"Keep it simple."}')}`;
      const result = await accept.execute(
        post(aRoute('ci'), { body, contentType: 'application/x-www-form-urlencoded', headers: { 'x-github-event': 'ping' } }),
      );
      expect(result.kind).toBe('accepted');
      expect((await stored())[0]!.payload).toEqual({ zen: 'Keep it simple.' });
    });

    it('turns another form body into an object of its fields', async () => {
      const { accept, stored } = setUp();
      const result = await accept.execute(
        post(aRoute('alerts'), { body: 'type=disk_full&host=db1', contentType: 'application/x-www-form-urlencoded' }),
      );
      expect(result).toMatchObject({ kind: 'accepted', event: 'disk_full' });
      expect((await stored())[0]!.payload).toEqual({ type: 'disk_full', host: 'db1' });
    });
  });

  describe('event filter', () => {
    it("ignores an event not in the route's list, logged at debug only", async () => {
      const { accept, inbox, logger } = setUp();
      const route = aRoute('ci', { events: ['pull_request'] });
      expect(await accept.execute(post(route, { headers: { 'x-github-event': 'ping' } }))).toEqual({
        kind: 'ignored',
        reason: 'event',
        event: 'ping',
      });
      expect(await inbox.pending()).toBe(0);
      expect(logger.entries.map((entry) => entry.level)).toEqual(['debug']);
    });

    it('matches the event kind exactly, from the header or else the payload', async () => {
      const { accept } = setUp();
      const route = aRoute('pay', { events: ['payment_intent.succeeded', 'Merge Request Hook'] });
      expect((await accept.execute(post(route, { body: '{"type":"payment_intent.succeeded"}' }))).kind).toBe('accepted');
      expect((await accept.execute(post(route, { headers: { 'x-gitlab-event': 'Merge Request Hook' } }))).kind).toBe('accepted');
      expect(await accept.execute(post(route, { headers: { 'x-gitlab-event': 'merge request hook' } }))).toEqual({
        kind: 'ignored',
        reason: 'event',
        event: 'merge request hook',
      });
      expect(await accept.execute(post(route, { body: '{}' }))).toEqual({ kind: 'ignored', reason: 'event', event: 'unknown' });
    });

    it('accepts every event with an empty list', async () => {
      const { accept } = setUp();
      expect((await accept.execute(post(aRoute('ci'), { headers: { 'x-github-event': 'anything' } }))).kind).toBe('accepted');
    });

    it('comes after the body: a malformed body of an ignored event is refused as malformed', async () => {
      const { accept } = setUp();
      const route = aRoute('ci', { events: ['push'] });
      expect((await accept.execute(post(route, { body: '[]', headers: { 'x-github-event': 'ping' } }))).kind).toBe('malformed_body');
    });
  });

  describe('field filters', () => {
    const route = aRoute('prs', { events: ['pull_request'], filters: [{ field: 'action', in: ['opened', 'reopened'] }] });

    it('ignore a payload that does not match, with the reason', async () => {
      const { accept, inbox } = setUp();
      const result = await accept.execute(post(route, { body: '{"action":"closed"}', headers: { 'x-github-event': 'pull_request' } }));
      expect(result).toEqual({ kind: 'ignored', reason: 'filter', event: 'pull_request', route: 'prs' });
      expect(await inbox.pending()).toBe(0);
    });

    it('let a matching payload through', async () => {
      const { accept } = setUp();
      const result = await accept.execute(post(route, { body: '{"action":"reopened"}', headers: { 'x-github-event': 'pull_request' } }));
      expect(result.kind).toBe('accepted');
    });

    it('come after the event filter', async () => {
      const { accept } = setUp();
      const result = await accept.execute(post(route, { body: '{"action":"closed"}', headers: { 'x-github-event': 'push' } }));
      expect(result).toEqual({ kind: 'ignored', reason: 'event', event: 'push' });
    });
  });

  describe('idempotency', () => {
    it('drops a repeated delivery id of the same route as a duplicate, for an hour', async () => {
      const { accept, clock, inbox } = setUp();
      const route = aRoute('ci');
      const again = () => accept.execute(post(route, { headers: { 'x-github-delivery': 'abc' } }));
      expect((await again()).kind).toBe('accepted');
      clock.advance(59 * 60 * 1000);
      expect(await again()).toEqual({ kind: 'duplicate', deliveryId: 'abc' });
      expect(await inbox.pending()).toBe(1);
      clock.advance(60 * 1000);
      expect((await again()).kind).toBe('accepted');
    });

    it.each(['x-github-delivery', 'x-hosta-delivery', 'x-request-id', 'webhook-id'])('keys on %s', async (header) => {
      const { accept } = setUp();
      const route = aRoute('ci');
      expect((await accept.execute(post(route, { headers: { [header]: 'id-1' } }))).kind).toBe('accepted');
      expect(await accept.execute(post(route, { headers: { [header]: 'id-1' } }))).toEqual({ kind: 'duplicate', deliveryId: 'id-1' });
    });

    it('keys a Stripe-signed request on its payload id: a replay within the tolerance runs once', async () => {
      const { accept, inbox } = setUp();
      const route = aRoute('payments');
      const replay = () =>
        accept.execute(post(route, { headers: { 'stripe-signature': 't=1,v1=abc' }, body: '{"id":"evt_42","type":"charge.disputed"}' }));

      expect(await replay()).toMatchObject({ kind: 'accepted', deliveryId: 'evt_42' });
      for (let i = 0; i < 9; i += 1) expect(await replay()).toEqual({ kind: 'duplicate', deliveryId: 'evt_42' });
      expect(await inbox.pending()).toBe(1);
    });

    it('keys on the route too', async () => {
      const { accept } = setUp();
      const headers = { 'x-github-delivery': 'abc' };
      expect((await accept.execute(post(aRoute('a'), { headers }))).kind).toBe('accepted');
      expect((await accept.execute(post(aRoute('b'), { headers }))).kind).toBe('accepted');
    });

    it('does not deduplicate without a delivery id: the id is the receipt time in milliseconds', async () => {
      const { accept } = setUp();
      const route = aRoute('ci');
      expect(await accept.execute(post(route))).toMatchObject({ kind: 'accepted', deliveryId: String(Date.parse(T0)) });
      expect(await accept.execute(post(route))).toMatchObject({ kind: 'accepted', deliveryId: String(Date.parse(T0)) });
    });

    it('remembers only accepted events: an ignored or filtered delivery may come back and be taken', async () => {
      const { accept } = setUp();
      const headers = { 'x-github-delivery': 'abc' };
      const route = aRoute('ci', { filters: [{ field: 'ready', in: [true] }] });
      expect((await accept.execute(post(route, { headers, body: '{"ready":false}' }))).kind).toBe('ignored');
      expect((await accept.execute(post(route, { headers, body: '{"ready":true}' }))).kind).toBe('accepted');
    });

    it('takes one of two simultaneous copies of a delivery', async () => {
      const { accept, inbox } = setUp();
      const route = aRoute('ci');
      const copy = () => accept.execute(post(route, { headers: { 'x-github-delivery': 'same' } }));
      const kinds = (await Promise.all([copy(), copy()])).map((result) => result.kind).sort();
      expect(kinds).toEqual(['accepted', 'duplicate']);
      expect(await inbox.pending()).toBe(1);
    });
  });

  it('answers unavailable, retry in 30 seconds, when the inbox cannot store the event, and takes the retry', async () => {
    const { accept, inbox, logger } = setUp();
    inbox.failures = 1;
    const route = aRoute('ci');
    const send = () => accept.execute(post(route, { headers: { 'x-github-delivery': 'abc' } }));
    expect(await send()).toEqual({ kind: 'unavailable', retryAfterSeconds: 30 });
    expect(logger.entries.at(-1)).toMatchObject({ level: 'error', fields: { route: 'ci', delivery_id: 'abc' } });
    expect((await send()).kind).toBe('accepted');
    expect(await inbox.pending()).toBe(1);
  });

  it('answers unavailable, retry in 30 seconds, when the rate limiter fails, logs it once, stores nothing, and takes the retry', async () => {
    const { accept, inbox, rateLimiter, logger } = setUp();
    rateLimiter.failures = 1;
    const route = aRoute('ci');
    const send = () => accept.execute(post(route, { headers: { 'x-github-delivery': 'abc' } }));

    expect(await send()).toEqual({ kind: 'unavailable', retryAfterSeconds: 30 });
    expect(logger.entries).toEqual([
      {
        level: 'error',
        message: 'webhook not accepted: the rate limiter failed; answering 503 until events can be stored again',
        fields: { route: 'ci', error: 'Cannot use the database db:5432/agent: nothing listens there' },
      },
    ]);
    expect(await inbox.pending()).toBe(0);

    expect((await send()).kind).toBe('accepted');
    expect(await inbox.pending()).toBe(1);
  });

  it('logs an outage once however many requests meet it, and its end once', async () => {
    const { accept, inbox, logger } = setUp();
    inbox.failures = 5;
    const route = aRoute('ci');
    for (let n = 0; n < 5; n += 1) {
      expect((await accept.execute(post(route, { headers: { 'x-github-delivery': `d-${n}` } }))).kind).toBe('unavailable');
    }
    expect((await accept.execute(post(route, { headers: { 'x-github-delivery': 'd-5' } }))).kind).toBe('accepted');

    const messages = logger.entries
      .filter((entry) => entry.level !== 'info' || /stored again/.test(entry.message))
      .map((entry) => entry.message);
    expect(messages).toEqual([
      'webhook not stored: the inbox failed; answering 503 until events can be stored again',
      'webhook events are stored again',
    ]);
  });
});
