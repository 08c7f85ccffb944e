import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { secretKey, secretKeyProblem } from '../../../src/adapters/config/eventsOutSettings.js';
import { HttpEventSender } from '../../../src/adapters/events/HttpEventSender.js';
import type { OutboundEvent } from '../../../src/domain/events/outboundEvents.js';

/** A receiver's check, written from the Standard Webhooks spec: HMAC-SHA256 of "<id>.<timestamp>.<body>", base64, after "v1,". */
function verifies(secret: string, headers: IncomingMessage['headers'], body: string): boolean {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest();
  return String(headers['webhook-signature'])
    .split(' ')
    .some((each) => each.startsWith('v1,') && timingSafeEqual(Buffer.from(each.slice(3), 'base64'), expected));
}

const EVENT: OutboundEvent = {
  id: 'msg_cron_r1_run_finished',
  type: 'run.finished',
  timestamp: '2030-01-01T00:00:05.000Z',
  data: { id: 'r1', answer: 'héllo ✓' },
  subject: null,
};

describe('HttpEventSender', () => {
  let server: Server;
  let url: string;
  const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  let status = 200;

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received.length = 0;
    status = 200;
  });

  it.each([['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], ['a plain shared secret']])(
    'signs the body as Standard Webhooks with the key of %s, which a receiver verifies',
    async (secret) => {
      const result = await new HttpEventSender().send(url, secretKey(secret), EVENT, new Date('2030-01-01T00:00:07.900Z'));

      expect(result).toEqual({ status: 200, error: null });
      const [{ headers, body }] = received as [(typeof received)[0]];
      expect(JSON.parse(body)).toEqual({ type: 'run.finished', timestamp: EVENT.timestamp, data: EVENT.data });
      expect(headers['webhook-id']).toBe('msg_cron_r1_run_finished');
      expect(headers['webhook-timestamp']).toBe(String(Date.parse('2030-01-01T00:00:07Z') / 1000));
      expect(headers['content-type']).toBe('application/json');
      expect(verifies(secret, headers, body)).toBe(true);
      expect(verifies('whsec_AQID', headers, body)).toBe(false);
    },
  );

  it("gives the receiver's status, and null with the reason when nothing answers", async () => {
    status = 503;
    expect(await new HttpEventSender().send(url, secretKey('s'), EVENT, new Date())).toEqual({ status: 503, error: null });

    const closed = await new HttpEventSender().send('http://127.0.0.1:1/none', secretKey('s'), EVENT, new Date());
    expect(closed.status).toBeNull();
    expect(closed.error).toMatch(/^could not reach http:\/\/127\.0\.0\.1:1\/none: /);
  });

  it('takes the base64 of a whsec_ secret, and refuses one whose base64 is broken', () => {
    expect(Buffer.from(secretKey('whsec_AQID'))).toEqual(Buffer.from([1, 2, 3]));
    expect(secretKeyProblem('whsec_not base64!')).toBe('what follows whsec_ is not base64');
    expect(secretKeyProblem('whsec')).toBeNull();
  });
});
