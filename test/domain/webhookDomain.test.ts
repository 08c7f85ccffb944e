import { DeliveryMemory, deliveryKey } from '../../src/domain/webhook/DeliveryMemory.js';
import { Fifo } from '../../src/domain/webhook/Fifo.js';
import { passesFilters } from '../../src/domain/webhook/fieldFilters.js';
import { jsonEqual, lookUpPath } from '../../src/domain/webhook/payloadPath.js';
import { defaultPrompt, rawPayload, renderTemplate, webhookPrompt } from '../../src/domain/webhook/promptTemplate.js';
import { SlidingWindowRateLimit } from '../../src/domain/webhook/SlidingWindowRateLimit.js';
import { isRouteName } from '../../src/domain/webhook/WebhookRoute.js';
import { checkSubscriptionName } from '../../src/domain/webhook/WebhookSubscription.js';
import {
  MAX_PAYLOAD_DEPTH,
  deliveryIdOf,
  eventKindOf,
  headerValue,
  isMediaRange,
  mediaTypeOf,
  parseWebhookBody,
  takesContentType,
} from '../../src/domain/webhook/webhookRequest.js';

const pullRequest = {
  action: 'opened',
  number: 42,
  pull_request: {
    title: 'Fix the tick',
    merged: false,
    user: { login: 'octocat' },
    labels: [{ name: 'bug' }, { name: 'urgent' }],
  },
  repository: { full_name: 'acme/agent' },
};

describe('payload paths', () => {
  it('follows object keys and list indexes', () => {
    expect(lookUpPath(pullRequest, 'pull_request.labels.1.name')).toEqual({ found: true, value: 'urgent' });
    expect(lookUpPath(pullRequest, 'pull_request.merged')).toEqual({ found: true, value: false });
  });

  it.each([
    'missing',
    'pull_request.labels.2.name',
    'pull_request.labels.name',
    'pull_request.labels.01',
    'number.x',
    'a..b',
    '',
    'constructor',
    '__proto__',
    'pull_request.toString',
  ])('finds nothing at %j', (path) => {
    expect(lookUpPath(pullRequest, path)).toEqual({ found: false });
  });

  it('finds a null value, which is not the same as nothing', () => {
    expect(lookUpPath({ a: null }, 'a')).toEqual({ found: true, value: null });
  });

  it('finds a key the sender named __proto__', () => {
    expect(lookUpPath(JSON.parse('{"__proto__": {"x": 1}}'), '__proto__.x')).toEqual({ found: true, value: 1 });
  });
});

describe('JSON equality', () => {
  it.each([
    [1, 1, true],
    [1, '1', false],
    [null, null, true],
    [null, false, false],
    [[1, 2], [1, 2], true],
    [[1, 2], [2, 1], false],
    [{ a: 1, b: [true] }, { b: [true], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: undefined }, { b: undefined }, false],
    [[], {}, false],
  ])('%j vs %j → %s', (a, b, equal) => {
    expect(jsonEqual(a, b)).toBe(equal);
  });
});

describe('prompt templates', () => {
  it('puts strings in as they are and other values as JSON indented by 2', () => {
    expect(renderTemplate('{pull_request.title} #{number} by {pull_request.user.login} merged={pull_request.merged}', pullRequest)).toBe(
      'Fix the tick #42 by octocat merged=false',
    );
    expect(renderTemplate('{pull_request.labels.0}', pullRequest)).toBe('{\n  "name": "bug"\n}');
    expect(renderTemplate('{a}', { a: null })).toBe('null');
  });

  it('leaves a placeholder whose path finds nothing as written', () => {
    expect(renderTemplate('PR {pull_request.nope} on {repository.full_name}', pullRequest)).toBe('PR {pull_request.nope} on acme/agent');
  });

  it('has no other syntax: braces with spaces or nested braces are plain text', () => {
    const template = '{% if x %}{ action }{{action}}{#each}{}';
    expect(renderTemplate(template, pullRequest)).toBe('{% if x %}{ action }{opened}{#each}{}');
  });

  it('never reads an inserted value again as a template', () => {
    expect(renderTemplate('{title}', { title: '{secret}', secret: 'leaked' })).toBe('{secret}');
  });

  it('puts in the whole payload as 2-space JSON for {__raw__}', () => {
    expect(renderTemplate('Raw: {__raw__}', { a: 1 })).toBe('Raw: {\n  "a": 1\n}');
  });

  it('cuts {__raw__} at 4000 characters, never inside a character', () => {
    const raw = rawPayload({ text: '😀'.repeat(5000) });
    expect(Array.from(raw)).toHaveLength(4000);
    expect(raw.startsWith('{\n  "text": "😀')).toBe(true);
    expect(Array.from(raw).at(-1)).toBe('😀');
    expect(rawPayload({ text: 'x'.repeat(10) })).toBe('{\n  "text": "xxxxxxxxxx"\n}');
  });

  it('cuts {__raw__} exactly where splitting it into characters would, with escapes and emoji mixed', () => {
    const text = `${'\ud800x'.repeat(1000)}${'😀'.repeat(3000)}`;
    const raw = rawPayload({ text });
    expect(Array.from(raw)).toHaveLength(4000);
    expect(raw).toBe(
      Array.from(JSON.stringify({ text }, null, 2))
        .slice(0, 4000)
        .join(''),
    );
  });

  it('without a template gives the event name, the route name and the raw payload', () => {
    const prompt = defaultPrompt('push', 'ci', { ref: 'main' });
    expect(prompt).toContain('"push"');
    expect(prompt).toContain('"ci"');
    expect(prompt).toContain('{\n  "ref": "main"\n}');
    expect(webhookPrompt({ name: 'ci', prompt: null }, 'push', { ref: 'main' })).toBe(prompt);
    expect(webhookPrompt({ name: 'ci', prompt: 'Ref {ref}' }, 'push', { ref: 'main' })).toBe('Ref main');
  });

  it('without a template gives the whole payload, however long (only {__raw__} is cut)', () => {
    const payload = { text: 'x'.repeat(10_000), end: 'the last field' };

    expect(defaultPrompt('push', 'ci', payload)).toContain(JSON.stringify(payload, null, 2));
  });
});

describe('event kind', () => {
  it.each([
    [{ 'x-github-event': 'pull_request', 'x-gitlab-event': 'Push Hook' }, {}, 'pull_request'],
    [{ 'x-hosta-event': 'issues' }, { type: 'other' }, 'issues'],
    [{ 'x-gitlab-event': 'Merge Request Hook' }, {}, 'Merge Request Hook'],
    [{ 'x-hostb-event': 'Pipeline Hook' }, {}, 'Pipeline Hook'],
    [{}, { type: 'payment_intent.succeeded', event_type: 'x' }, 'payment_intent.succeeded'],
    [{}, { event_type: 'deploy', object_kind: 'push' }, 'deploy'],
    [{}, { object_kind: 'merge_request' }, 'merge_request'],
    [{ 'x-github-event': '' }, { type: 42, object_kind: 'note' }, 'note'],
    [{}, {}, 'unknown'],
  ])('%j with %j → %s', (headers, payload, kind) => {
    expect(eventKindOf(headers, payload)).toBe(kind);
  });

  it('reads only own header values, never inherited properties', () => {
    expect(headerValue({}, 'constructor')).toBeNull();
    expect(headerValue({ 'x-a': 'b' }, 'x-a')).toBe('b');
    expect(eventKindOf({}, Object.create({ type: 'inherited' }) as Record<string, unknown>)).toBe('unknown');
  });
});

describe('delivery id', () => {
  it.each([
    [{ 'x-github-delivery': 'g', 'x-hosta-delivery': 'h', 'x-request-id': 'r', 'webhook-id': 'w' }, 'g'],
    [{ 'x-hosta-delivery': 'h', 'x-request-id': 'r' }, 'h'],
    [{ 'x-request-id': 'r', 'webhook-id': 'w' }, 'r'],
    [{ 'webhook-id': 'msg_1' }, 'msg_1'],
  ])('%j → %s from the sender', (headers, id) => {
    expect(deliveryIdOf(headers, 1700000000123)).toEqual({ value: id, fromSender: true });
  });

  it('is the receipt time in milliseconds when the sender gives none', () => {
    expect(deliveryIdOf({}, 1700000000123)).toEqual({ value: '1700000000123', fromSender: false });
  });

  it('names a Stripe-signed request by its payload id, even when a proxy added X-Request-ID', () => {
    const stripe = { 'stripe-signature': 't=1,v1=abc', 'x-request-id': 'proxy-123' };

    expect(deliveryIdOf(stripe, 1700000000123, { id: 'evt_1NG8', type: 'charge.disputed' })).toEqual({
      value: 'evt_1NG8',
      fromSender: true,
    });
    // Without a usable id, the usual headers decide.
    expect(deliveryIdOf(stripe, 1700000000123, { id: 7 })).toEqual({ value: 'proxy-123', fromSender: true });
  });
});

describe('request bodies', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('parses a JSON object', () => {
    expect(parseWebhookBody(bytes('{"a":[1,{"b":null}]}'), 'application/json; charset=utf-8')).toEqual({
      ok: true,
      payload: { a: [1, { b: null }] },
      json: '{"a":[1,{"b":null}]}',
    });
  });

  it('reads a body without a content type, or with another one a route lists, as JSON when it is a JSON object', () => {
    expect(parseWebhookBody(bytes('{"a":1}'), null)).toEqual({ ok: true, payload: { a: 1 }, json: '{"a":1}' });
    expect(parseWebhookBody(bytes('{"a":1}'), 'text/plain')).toEqual({ ok: true, payload: { a: 1 }, json: '{"a":1}' });
  });

  it('gives any other body of such a type as its text, under "body"', () => {
    for (const text of ['Disk full', '', '[1,2]', '{"a":1', '42']) {
      expect(parseWebhookBody(bytes(text), 'text/plain')).toEqual({ ok: true, payload: { body: text }, json: null });
    }
    expect(parseWebhookBody(bytes('<a/>'), null)).toEqual({ ok: true, payload: { body: '<a/>' }, json: null });
  });

  it('reads every application/*+json type as JSON, strictly', () => {
    expect(parseWebhookBody(bytes('{"a":1}'), 'application/vnd.github+json')).toEqual({ ok: true, payload: { a: 1 }, json: '{"a":1}' });
    expect(parseWebhookBody(bytes('nope'), 'application/cloudevents+json; charset=utf-8')).toEqual({ ok: false });
  });

  it.each(['', 'nope', '[1,2]', '"text"', '42', 'null', '{"a":1', '{"a":1}}'])('refuses %j as JSON', (text) => {
    expect(parseWebhookBody(bytes(text), 'application/json')).toEqual({ ok: false });
  });

  it('refuses bytes that are not UTF-8', () => {
    const body = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    expect(parseWebhookBody(body, 'application/json')).toEqual({ ok: false });
    expect(parseWebhookBody(body, 'application/x-www-form-urlencoded')).toEqual({ ok: false });
  });

  it(`refuses nesting deeper than ${MAX_PAYLOAD_DEPTH} levels, and takes it at the bound`, () => {
    const nested = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    expect(parseWebhookBody(bytes(nested(MAX_PAYLOAD_DEPTH)), null).ok).toBe(true);
    expect(parseWebhookBody(bytes(nested(MAX_PAYLOAD_DEPTH + 1)), null).ok).toBe(false);
    expect(parseWebhookBody(bytes(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`), null).ok).toBe(false);
  });

  it('counts nesting through lists and through a key named __proto__', () => {
    const nested = (depth: number) => `{"__proto__":${'[{"b":'.repeat((depth - 2) / 2)}1${'}]'.repeat((depth - 2) / 2)}}`;
    expect(parseWebhookBody(bytes(nested(MAX_PAYLOAD_DEPTH)), null).ok).toBe(true);
    expect(parseWebhookBody(bytes(nested(MAX_PAYLOAD_DEPTH + 2)), null).ok).toBe(false);
  });

  it('decodes a good body after refusing one that is not UTF-8', () => {
    expect(parseWebhookBody(new Uint8Array([0x7b, 0xff, 0x7d]), null)).toEqual({ ok: false });
    expect(parseWebhookBody(bytes('{"ok":"ünï"}'), null)).toEqual({ ok: true, payload: { ok: 'ünï' }, json: '{"ok":"ünï"}' });
  });

  it("takes the JSON in the payload field of a form body (the first code host's form mode)", () => {
    const body = `payload=${encodeURIComponent('{"action":"opened","n":1}')}`;
    expect(parseWebhookBody(bytes(body), 'application/x-www-form-urlencoded')).toEqual({
      ok: true,
      payload: { action: 'opened', n: 1 },
      json: '{"action":"opened","n":1}',
    });
    expect(parseWebhookBody(bytes('payload=%5B1%5D'), 'application/x-www-form-urlencoded')).toEqual({ ok: false });
    expect(parseWebhookBody(bytes('payload=oops'), 'Application/X-WWW-Form-Urlencoded; charset=utf-8')).toEqual({ ok: false });
  });

  it('reads a form body whose text is a JSON object as JSON (what curl -d sends)', () => {
    const text = ' {"action":"opened","title":"a+b & c=d"}';
    expect(parseWebhookBody(bytes(text), 'application/x-www-form-urlencoded')).toEqual({
      ok: true,
      payload: { action: 'opened', title: 'a+b & c=d' },
      json: text,
    });
    expect(parseWebhookBody(bytes('{"a":1'), 'application/x-www-form-urlencoded')).toEqual({ ok: false });
  });

  it('turns another form body into an object of its fields, repeated fields into lists', () => {
    expect(parseWebhookBody(bytes('status=ok&tag=a&tag=b+c&__proto__=x'), 'application/x-www-form-urlencoded')).toEqual({
      ok: true,
      payload: JSON.parse('{"status":"ok","tag":["a","b c"],"__proto__":"x"}'),
      json: null,
    });
    expect(parseWebhookBody(bytes(''), 'application/x-www-form-urlencoded')).toEqual({ ok: true, payload: {}, json: null });
  });
});

describe('field filters', () => {
  it('pass when there are none', () => {
    expect(passesFilters([], pullRequest)).toBe(true);
  });

  it('pass only when every filter matches', () => {
    const opened = { field: 'action', in: ['opened', 'reopened'] };
    const bug = { field: 'pull_request.labels.0.name', in: ['bug'] };
    expect(passesFilters([opened, bug], pullRequest)).toBe(true);
    expect(passesFilters([opened, { field: 'pull_request.labels.0.name', in: ['docs'] }], pullRequest)).toBe(false);
  });

  it('compare JSON values exactly', () => {
    expect(passesFilters([{ field: 'number', in: [42] }], pullRequest)).toBe(true);
    expect(passesFilters([{ field: 'number', in: ['42'] }], pullRequest)).toBe(false);
    expect(passesFilters([{ field: 'pull_request.merged', in: [false] }], pullRequest)).toBe(true);
    expect(passesFilters([{ field: 'pull_request.user', in: [{ login: 'octocat' }] }], pullRequest)).toBe(true);
  });

  it('fail on a field that is not there, even against null', () => {
    expect(passesFilters([{ field: 'nope', in: [null] }], pullRequest)).toBe(false);
    expect(passesFilters([{ field: 'action', in: [] }], pullRequest)).toBe(false);
  });
});

describe('sliding-window rate limit', () => {
  it('allows the limit in any 60 s window and says when the next one passes', () => {
    const limit = new SlidingWindowRateLimit();
    expect(limit.take('r', 2, 0)).toEqual({ allowed: true });
    expect(limit.take('r', 2, 10_000)).toEqual({ allowed: true });
    expect(limit.take('r', 2, 20_000)).toEqual({ allowed: false, retryAfterSeconds: 40 });
    expect(limit.take('r', 2, 59_999)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limit.take('r', 2, 60_000)).toEqual({ allowed: true });
    expect(limit.take('r', 2, 60_001)).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });

  it('is a sliding window, not fixed minutes', () => {
    const limit = new SlidingWindowRateLimit();
    expect(limit.take('r', 1, 59_000)).toEqual({ allowed: true });
    expect(limit.take('r', 1, 61_000)).toEqual({ allowed: false, retryAfterSeconds: 58 });
  });

  it('does not count refused requests', () => {
    const limit = new SlidingWindowRateLimit();
    limit.take('r', 1, 0);
    for (let t = 1000; t < 60_000; t += 1000) limit.take('r', 1, t);
    expect(limit.take('r', 1, 60_000)).toEqual({ allowed: true });
  });

  it('counts each key separately', () => {
    const limit = new SlidingWindowRateLimit();
    expect(limit.take('a', 1, 0)).toEqual({ allowed: true });
    expect(limit.take('b', 1, 0)).toEqual({ allowed: true });
    expect(limit.take('a', 1, 1)).toMatchObject({ allowed: false });
  });

  it('stays exact with a large limit over many windows', () => {
    const limit = new SlidingWindowRateLimit(10_000);
    const allowedAt: number[] = [];
    for (let t = 0; t < 50_000; t += 1) if (limit.take('r', 3000, t).allowed) allowedAt.push(t);
    const expected = [0, 10_000, 20_000, 30_000, 40_000].flatMap((start) => Array.from({ length: 3000 }, (_, i) => start + i));
    expect(allowedAt).toEqual(expected);
    expect(limit.take('r', 3000, 45_000)).toEqual({ allowed: false, retryAfterSeconds: 5 });
  });

  it('forgets keys whose window has emptied', () => {
    const limit = new SlidingWindowRateLimit();
    for (let i = 0; i < 100; i += 1) limit.take(`route-${i}`, 30, 0);
    expect(limit.size).toBe(100);
    limit.take('other', 30, 120_000);
    expect(limit.size).toBe(1);
  });
});

describe('first-in first-out queue', () => {
  it('gives items back in the order they came, through many more than it compacts at', () => {
    const queue = new Fifo<number>();
    const out: number[] = [];
    for (let n = 0; n < 10_000; n += 1) {
      queue.push(n);
      if (n % 3 !== 0) out.push(queue.shift()!);
    }
    expect(queue.size).toBe(10_000 - out.length);
    expect(queue.at(0)).toBe(out.length);
    expect(queue.last()).toBe(9999);
    expect(queue.at(queue.size)).toBeUndefined();
    while (queue.size > 0) out.push(queue.shift()!);
    expect(out).toEqual(Array.from({ length: 10_000 }, (_, n) => n));
    expect(queue.shift()).toBeUndefined();
    expect(queue.last()).toBeUndefined();
  });
});

describe('delivery memory', () => {
  it('remembers a key for an hour', () => {
    const memory = new DeliveryMemory();
    const key = deliveryKey('ci', 'abc');
    expect(memory.remember(key, 0)).toBe(true);
    expect(memory.remember(key, 3_599_999)).toBe(false);
    expect(memory.remember(key, 3_600_000)).toBe(true);
  });

  it('keys by route and delivery id, unambiguously', () => {
    expect(deliveryKey('a', 'b:c')).not.toBe(deliveryKey('a:b', 'c'));
    const memory = new DeliveryMemory();
    expect(memory.remember(deliveryKey('a', 'x'), 0)).toBe(true);
    expect(memory.remember(deliveryKey('b', 'x'), 0)).toBe(true);
  });

  it('forgets a key on request, and counts a later remembering from its own time', () => {
    const memory = new DeliveryMemory(1000, 10);
    memory.remember('k', 0);
    memory.forget('k');
    expect(memory.remember('k', 500)).toBe(true);
    expect(memory.remember('other', 1200)).toBe(true);
    expect(memory.remember('k', 1400)).toBe(false);
    expect(memory.remember('k', 1500)).toBe(true);
  });

  it('keeps its bound over many more keys than it holds', () => {
    const memory = new DeliveryMemory(60_000, 100);
    for (let n = 0; n < 5000; n += 1) expect(memory.remember(`key-${n}`, n)).toBe(true);
    expect(memory.size).toBe(100);
    expect(memory.remember('key-4999', 5000)).toBe(false);
    expect(memory.remember('key-4899', 5000)).toBe(true);
  });

  it('drops expired keys and holds at most its bound, the oldest going first', () => {
    const memory = new DeliveryMemory(1000, 3);
    for (const [key, at] of [
      ['a', 0],
      ['b', 10],
      ['c', 20],
      ['d', 30],
    ] as const)
      memory.remember(key, at);
    expect(memory.size).toBe(3);
    expect(memory.remember('a', 40)).toBe(true);
    expect(memory.remember('d', 40)).toBe(false);
    memory.remember('e', 5000);
    expect(memory.size).toBe(1);
  });
});

describe('route names', () => {
  it.each(['github', 'Deploy_Hook-2', 'PAYMENTS', '7days', 'a', 'x'.repeat(64), `A${'_'.repeat(62)}-`])('accepts %j', (name) => {
    expect(isRouteName(name)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['a parent directory', '..'],
    ['the current directory', '.'],
    ['a slash', 'a/b'],
    ['a backslash', 'a\\b'],
    ['a dot', 'my.route'],
    ['a space', 'new route'],
    ['a leading dash', '-hook'],
    ['a leading underscore', '_hook'],
    ['a percent sign', 'a%2Fb'],
    ['a letter outside ASCII', 'café'],
    ['a line break', 'hook\n'],
    ['65 characters', 'x'.repeat(65)],
    ['300 characters', 'x'.repeat(300)],
  ])('refuses %s', (_case, name) => {
    expect(isRouteName(name)).toBe(false);
  });

  it('is the rule of subscription names too, refused with one sentence stating it', () => {
    expect(() => checkSubscriptionName('Deploy_Hook-2')).not.toThrow();
    expect(() => checkSubscriptionName('..')).toThrow(
      expect.objectContaining({
        code: 'WEBHOOK.NAME_INVALID',
        message:
          'The name ".." cannot be used for a subscription: use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit.',
      }),
    );
    expect(() => checkSubscriptionName('x'.repeat(65))).toThrow(expect.objectContaining({ code: 'WEBHOOK.NAME_INVALID' }));
  });
});

describe('Content-Types a route takes', () => {
  it('reads the media type without its parameters, in lower case; none for an absent or empty header', () => {
    expect(mediaTypeOf('Application/JSON; charset=UTF-8')).toBe('application/json');
    expect(mediaTypeOf(' text/plain ')).toBe('text/plain');
    expect(mediaTypeOf('')).toBeNull();
    expect(mediaTypeOf(' ; charset=utf-8')).toBeNull();
    expect(mediaTypeOf(null)).toBeNull();
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON;CHARSET=UTF-8',
    'application/vnd.github+json',
    'application/merge-patch+json; charset=utf-8',
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=UTF-8',
  ])('always takes %s', (type) => {
    expect(takesContentType(type, [])).toBe(true);
  });

  it.each([
    'text/plain',
    'text/json',
    'application/xml',
    'application/+json',
    'application/json+x',
    'multipart/form-data; boundary=x',
    'json',
    'application/octet-stream',
  ])('takes %s only when the route lists it', (type) => {
    expect(takesContentType(type, [])).toBe(false);
    expect(takesContentType(type, [mediaTypeOf(type)!])).toBe(true);
  });

  it('takes a missing Content-Type as application/octet-stream', () => {
    expect(takesContentType(null, [])).toBe(false);
    expect(takesContentType('', [])).toBe(false);
    expect(takesContentType(null, ['application/octet-stream'])).toBe(true);
    expect(takesContentType(null, ['application/*'])).toBe(true);
    expect(takesContentType(null, ['text/*'])).toBe(false);
  });

  it('takes every type of a listed range', () => {
    expect(takesContentType('text/csv; header=present', ['text/*'])).toBe(true);
    expect(takesContentType('image/png', ['text/*'])).toBe(false);
    expect(takesContentType('image/png', ['*/*'])).toBe(true);
  });

  it.each([
    ['text/plain', true],
    ['application/vnd.api+json', true],
    ['text/*', true],
    ['*/*', true],
    ['*/json', false],
    ['text', false],
    ['text/plain; charset=utf-8', false],
    ['text/ plain', false],
    ['', false],
  ])('knows whether %j can be listed in content_types: %s', (text, listable) => {
    expect(isMediaRange(text)).toBe(listable);
  });
});
