import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { HttpWebhookClient } from '../../../src/adapters/http/HttpWebhookClient.js';
import { WebhookSignatureVerifier } from '../../../src/adapters/security/WebhookSignatureVerifier.js';
import { SystemClock } from '../../../src/adapters/system/SystemClock.js';
import { LocalWebServer } from '../../support/localWebServer.js';

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

const clientFor = (port: number, host = '127.0.0.1') =>
  new HttpWebhookClient({ platforms: { webhook: { extra: { host, port } } } } as unknown as AgentConfig);

describe('HttpWebhookClient', () => {
  let server: LocalWebServer | null = null;

  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('posts the payload as JSON with the event header and a signature the listener accepts', async () => {
    let received: { headers: IncomingMessage['headers']; body: Buffer } | null = null;
    server = await LocalWebServer.start({
      '/webhooks/payments': (request, response) => {
        void readBody(request).then((body) => {
          received = { headers: request.headers, body };
          response.writeHead(202, { 'content-type': 'application/json' }).end('{"status":"accepted"}');
        });
      },
    });
    const port = Number(new URL(server.url()).port);

    const answer = await clientFor(port, '0.0.0.0').send({
      route: 'payments',
      event: 'test',
      payload: { hello: 'wörld' },
      secret: 'secret-1',
    });

    expect(answer).toEqual({ status: 202, body: '{"status":"accepted"}' });
    const { headers, body } = received!;
    expect(JSON.parse(body.toString('utf8'))).toEqual({ hello: 'wörld' });
    expect(headers).toMatchObject({ 'content-type': 'application/json', 'x-github-event': 'test' });
    expect(headers['x-github-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    const verifier = new WebhookSignatureVerifier(new SystemClock());
    const check = verifier.verify({ rawBody: body, headers: headers as Record<string, string> }, ['secret-1']);
    expect(check).toEqual({ valid: true, scheme: 'hub-signature-256' });
  });

  it('returns an error answer as it came', async () => {
    server = await LocalWebServer.start({
      '/webhooks/payments': (_request, response) =>
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"Invalid signature"}'),
    });

    const answer = await clientFor(Number(new URL(server.url()).port)).send({ route: 'payments', event: 'test', payload: {}, secret: 'x' });

    expect(answer).toEqual({ status: 401, body: '{"error":"Invalid signature"}' });
  });

  it('says in one sentence that no listener runs when nothing answers', async () => {
    const closed = await LocalWebServer.start({});
    const port = Number(new URL(closed.url()).port);
    await closed.close();

    await expect(clientFor(port).send({ route: 'payments', event: 'test', payload: {}, secret: 'x' })).rejects.toMatchObject({
      code: 'WEBHOOK.LISTENER_UNREACHABLE',
      message: `No webhook listener answers at http://127.0.0.1:${port} (ECONNREFUSED); start it with "agent gateway" (platforms.webhook.enabled: true) and try again.`,
    });
  });

  it('names the URL of a route, a wildcard bind address shown as the loopback address', () => {
    expect(clientFor(8644, '0.0.0.0').urlOf('payments')).toBe('http://127.0.0.1:8644/webhooks/payments');
  });
});
