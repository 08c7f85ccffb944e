import { replyFor } from '../../../src/adapters/http/webhookApp.js';
import type { WebhookOutcome } from '../../../src/application/webhook/AcceptWebhook.js';

describe('replyFor: the HTTP answer to each outcome of AcceptWebhook', () => {
  it.each<[string, WebhookOutcome, ReturnType<typeof replyFor>]>([
    ['a bad signature', { kind: 'refused_signature' }, { status: 401, body: { error: 'Invalid signature' } }],
    [
      'the rate limit',
      { kind: 'rate_limited', retryAfterSeconds: 12 },
      { status: 429, body: { error: 'Rate limit exceeded' }, headers: { 'Retry-After': '12' } },
    ],
    [
      'a Content-Type the route does not take',
      {
        kind: 'unsupported_media_type',
        mediaType: 'text/plain',
        accepted: ['application/json', 'application/*+json', 'application/x-www-form-urlencoded'],
      },
      {
        status: 415,
        body: {
          error:
            'Content-Type "text/plain" is not taken here; send application/json, application/*+json or application/x-www-form-urlencoded (a form may carry the JSON in its payload field).',
        },
        headers: { 'Accept-Post': 'application/json, application/*+json, application/x-www-form-urlencoded' },
      },
    ],
    [
      'a request without a Content-Type',
      {
        kind: 'unsupported_media_type',
        mediaType: null,
        accepted: ['application/json', 'application/*+json', 'application/x-www-form-urlencoded'],
      },
      {
        status: 415,
        body: {
          error:
            'The request has no Content-Type; send application/json, application/*+json or application/x-www-form-urlencoded (a form may carry the JSON in its payload field).',
        },
        headers: { 'Accept-Post': 'application/json, application/*+json, application/x-www-form-urlencoded' },
      },
    ],
    ['a malformed body', { kind: 'malformed_body' }, { status: 400, body: { error: 'Malformed JSON' } }],
    ['an ignored event', { kind: 'ignored', reason: 'event', event: 'ping' }, { status: 200, body: { status: 'ignored', event: 'ping' } }],
    [
      'a payload the filters ignore',
      { kind: 'ignored', reason: 'filter', event: 'pull_request', route: 'prs' },
      { status: 200, body: { status: 'ignored', reason: 'filter', route: 'prs' } },
    ],
    ['a duplicate', { kind: 'duplicate', deliveryId: 'abc' }, { status: 200, body: { status: 'duplicate', delivery_id: 'abc' } }],
    [
      'an inbox that cannot store',
      { kind: 'unavailable', retryAfterSeconds: 30 },
      { status: 503, body: { error: 'Could not store the event; retry later' }, headers: { 'Retry-After': '30' } },
    ],
    [
      'an accepted event',
      { kind: 'accepted', route: 'ci', event: 'pull_request', deliveryId: 'd-1', eventId: '000000000001' },
      { status: 202, body: { status: 'accepted', route: 'ci', event: 'pull_request', delivery_id: 'd-1' } },
    ],
  ])('answers %s', (_name, outcome, reply) => {
    expect(replyFor(outcome)).toEqual(reply);
  });

  it('keeps the body keys in the order clients have seen', () => {
    const reply = replyFor({ kind: 'accepted', route: 'ci', event: 'push', deliveryId: 'd-1', eventId: 'e-1' });
    expect(JSON.stringify(reply.body)).toBe('{"status":"accepted","route":"ci","event":"push","delivery_id":"d-1"}');
  });
});
