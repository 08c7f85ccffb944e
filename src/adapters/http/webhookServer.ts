import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Requests that asked `Expect: 100-continue` and were not yet told to go on: createWebhookServer
 * puts them here instead of letting Node answer 100 at once, so that the route and size checks
 * of the app (webhookApp.ts, fireApp.ts) come first and a body that would be refused is never invited.
 */
export const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Connection limits of the webhook listener. A slow client holds a socket and a timer, never a
 * worker (Node serves every connection from one event loop), and none of these lets it hold
 * even that for long:
 * - headers must arrive within 10 s (`headersTimeout`), at most 16 KiB of them (Node's default
 *   `maxHeaderSize`; more is answered 431 by Node itself);
 * - the whole request within 30 s (`requestTimeout`, answered 408 by Node); the app's own body
 *   deadline (`bodyReadTimeoutMs`, 10 s by default) comes first and answers 408 in JSON;
 * - an idle kept-alive connection is closed after 5 s (`keepAliveTimeout`);
 * - the timeouts are checked every second (`connectionsCheckingInterval`; Node's default is 30 s).
 *
 * A request with `Expect: 100-continue` gets its `100 Continue` only once the app has found the
 * route and checked the declared size, rather than at once.
 */
export const WEBHOOK_SERVER_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
  maxHeaderSizeBytes: 16 * 1024,
} as const;

/** An HTTP server for the webhook app with the limits above. */
export function createWebhookServer(app: RequestListener, limits = WEBHOOK_SERVER_LIMITS): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
      maxHeaderSize: limits.maxHeaderSizeBytes,
    },
    app,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.on('checkContinue', (req, res) => {
    awaitingContinue.add(req);
    app(req, res);
  });
  return server;
}

/**
 * Starts listening; resolves with the bound address, or rejects with the listen error (for
 * example `EADDRINUSE` when the port is taken — the caller names the port and the config key).
 */
export function listenWebhookServer(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Stops taking connections, closes idle ones, and resolves once every request has finished. */
export function closeWebhookServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
