import { createHmac } from 'node:crypto';
import request from 'supertest';
import type { WebhookRoute } from '../../../src/domain/webhook/WebhookRoute.js';
import { aRoute } from '../../support/fakes/FakeWebhookRoutes.js';
import { startWebhookListener, type WebhookListener } from '../../support/webhookListener.js';

const SECRET = 's3cret';
const PAYLOAD = { action: 'opened', number: 7, pull_request: { title: 'Fix the tick + the tock', body: 'a & b = c; 100% ✓' } };
const BODY = JSON.stringify(PAYLOAD);
const TAKEN = 'application/json, application/*+json or application/x-www-form-urlencoded (a form may carry the JSON in its payload field)';

const routes: WebhookRoute[] = [
  aRoute('ci'),
  aRoute('sns', { contentTypes: ['text/plain'] }),
  aRoute('bare', { contentTypes: ['application/octet-stream'] }),
  aRoute('texts', { contentTypes: ['text/*'] }),
];

/** X-Hub-Signature-256 over the bytes exactly as sent. */
function hub(body: string | Buffer, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * POSTs `body` with exactly the headers given: fetch adds no Content-Type to a byte body, so a
 * request without one is possible too.
 */
async function send(listener: WebhookListener, route: string, body: string, headers: Record<string, string>) {
  const response = await fetch(`${listener.url}/webhooks/${route}`, {
    method: 'POST',
    headers: { 'x-hub-signature-256': hub(body), ...headers },
    body: Buffer.from(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('webhook bodies by Content-Type', () => {
  let listener: WebhookListener;

  beforeEach(async () => {
    listener = await startWebhookListener({ routes, settings: { maxBodyBytes: 64 * 1024, rateLimitPerMinute: 100 } });
  });

  afterEach(async () => {
    await listener.close();
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'Application/JSON; Charset="utf-8"',
    'application/vnd.github+json',
    'application/cloudevents+json; charset=utf-8',
    'APPLICATION/LD+JSON',
  ])('reads a body sent as %s as JSON', async (type) => {
    const response = await send(listener, 'ci', BODY, { 'content-type': type });
    expect(response.status).toBe(202);
    expect((await listener.stored())[0]!.payload).toEqual(PAYLOAD);
  });

  it.each(['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'Application/X-WWW-Form-URLEncoded'])(
    "reads the first code host's form mode sent as %s: the JSON in its payload field, signed over the form bytes",
    async (type) => {
      // What the host sends: the JSON form-encoded (spaces as "+"), the signature over that text.
      const form = new URLSearchParams({ payload: BODY }).toString();
      expect(form).toContain('+');

      const response = await send(listener, 'ci', form, {
        'content-type': type,
        'x-github-event': 'pull_request',
        'x-github-delivery': '0b3f9c70-cc78-11e3-81ab-4c9367dc0958',
        'x-hub-signature-256': hub(form),
      });

      expect(response).toMatchObject({
        status: 202,
        body: { status: 'accepted', event: 'pull_request', delivery_id: '0b3f9c70-cc78-11e3-81ab-4c9367dc0958' },
      });
      expect((await listener.stored())[0]!.payload).toEqual(PAYLOAD);
    },
  );

  it('refuses a form delivery signed over the JSON inside it rather than the bytes sent', async () => {
    const form = new URLSearchParams({ payload: BODY }).toString();
    const response = await send(listener, 'ci', form, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-hub-signature-256': hub(BODY),
    });
    expect(response).toEqual({ status: 401, headers: expect.anything(), body: { error: 'Invalid signature' } });
  });

  it('answers 415 to text/plain, naming the type and what the route takes, and stores nothing', async () => {
    const response = await send(listener, 'ci', BODY, { 'content-type': 'text/plain; charset=utf-8' });

    expect(response.status).toBe(415);
    expect(response.body).toEqual({ error: `Content-Type "text/plain" is not taken here; send ${TAKEN}.` });
    expect(response.headers.get('accept-post')).toBe('application/json, application/*+json, application/x-www-form-urlencoded');
    expect(await listener.inbox.pending()).toBe(0);
  });

  it.each(['multipart/form-data; boundary=x', 'application/xml', 'text/json', 'application/jsonx'])('answers 415 to %s', async (type) => {
    const response = await send(listener, 'ci', BODY, { 'content-type': type });
    expect(response.status).toBe(415);
    expect(response.body.error).toMatch(/^Content-Type ".+" is not taken here; send application\/json, /);
  });

  it('answers 415 to a request without a Content-Type, saying it has none', async () => {
    const response = await send(listener, 'ci', BODY, {});

    expect(response.status).toBe(415);
    expect(response.body).toEqual({ error: `The request has no Content-Type; send ${TAKEN}.` });
  });

  it('checks the signature before the Content-Type, so an unsigned request learns nothing of the route', async () => {
    const response = await send(listener, 'ci', BODY, { 'content-type': 'text/plain', 'x-hub-signature-256': hub(BODY, 'wrong') });
    expect(response.status).toBe(401);
  });

  it('never repeats more than the start of an enormous Content-Type', async () => {
    const response = await send(listener, 'ci', BODY, { 'content-type': `text/${'x'.repeat(4000)}` });
    expect(response.status).toBe(415);
    expect(String(response.body.error).length).toBeLessThan(400);
  });

  describe('a route whose content_types lists more', () => {
    it("reads a listed type's body as JSON when it is a JSON object (what Amazon SNS labels text/plain)", async () => {
      const response = await send(listener, 'sns', BODY, { 'content-type': 'text/plain; charset=UTF-8' });
      expect(response.status).toBe(202);
      expect((await listener.stored())[0]!.payload).toEqual(PAYLOAD);
    });

    it('gives any other body of a listed type as text, under "body"', async () => {
      const text = 'Disk full on db1\nsecond line';
      const response = await send(listener, 'sns', text, { 'content-type': 'text/plain' });
      expect(response.status).toBe(202);
      expect((await listener.stored())[0]!.payload).toEqual({ body: text });
    });

    it('still takes JSON and forms, and still refuses what it does not list', async () => {
      expect((await send(listener, 'sns', BODY, { 'content-type': 'application/json' })).status).toBe(202);
      expect(
        (await send(listener, 'sns', `payload=${encodeURIComponent(BODY)}`, { 'content-type': 'application/x-www-form-urlencoded' }))
          .status,
      ).toBe(202);
      const refused = await send(listener, 'sns', BODY, { 'content-type': 'application/xml' });
      expect(refused.status).toBe(415);
      expect(refused.body.error).toBe(
        `Content-Type "application/xml" is not taken here; send application/json, application/*+json, application/x-www-form-urlencoded or text/plain (a form may carry the JSON in its payload field).`,
      );
      expect(refused.headers.get('accept-post')).toBe(
        'application/json, application/*+json, application/x-www-form-urlencoded, text/plain',
      );
      expect((await send(listener, 'sns', BODY, {})).status).toBe(415);
    });

    it('takes a request without a Content-Type where application/octet-stream is listed', async () => {
      const response = await send(listener, 'bare', BODY, {});
      expect(response.status).toBe(202);
      expect((await listener.stored())[0]!.payload).toEqual(PAYLOAD);
    });

    it('takes every type of a listed range', async () => {
      expect((await send(listener, 'texts', 'hello', { 'content-type': 'text/csv' })).status).toBe(202);
      expect((await send(listener, 'texts', 'hello', { 'content-type': 'TEXT/Markdown; charset=utf-8' })).status).toBe(202);
      expect((await send(listener, 'texts', 'hello', { 'content-type': 'image/png' })).status).toBe(415);
    });

    it('answers 400 to a listed type whose body is not UTF-8', async () => {
      const bytes = Buffer.from([0x7b, 0xff, 0x7d]);
      const response = await fetch(`${listener.url}/webhooks/sns`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'x-hub-signature-256': hub(bytes) },
        body: bytes,
      });
      expect(response.status).toBe(400);
    });
  });

  describe('route names that are members of every object', () => {
    it.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf'])('answers 404 Unknown route to /webhooks/%s', async (name) => {
      const response = await request(listener.url)
        .post(`/webhooks/${name}`)
        .set('Content-Type', 'application/json')
        .set('X-Hub-Signature-256', hub(BODY))
        .send(BODY);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'Unknown route' });
    });
  });
});
