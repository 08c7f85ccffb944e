import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * After an early answer (404, 413, 408) the rest of a body is read and thrown away, up to this
 * many bytes and for at most this long, so that a client still sending sees the answer instead
 * of a reset connection; then the connection is cut.
 */
const DRAIN_LIMIT_BYTES = 4 * 1024 * 1024;
const DRAIN_LIMIT_MS = 5_000;

/**
 * Sends a JSON answer straight through Node's response, as Express's `res.json` would (same
 * headers), without its content negotiation and header bookkeeping, which cost more per request
 * than the rest of the answer.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Answers before the body was read (or when reading stopped): the connection is closed after
 * the answer, and what the client is still sending is drained, within bounds, so that it gets
 * to read the answer.
 */
export function answerEarly(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  if (!req.complete) {
    res.setHeader('Connection', 'close');
    res.once('finish', () => drain(req));
  }
  sendJson(res, status, body, headers);
}

function drain(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  let drained = 0;
  const cut = () => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(cut, DRAIN_LIMIT_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) cut();
  });
  req.on('end', () => clearTimeout(timer));
  req.on('close', () => clearTimeout(timer));
  req.resume();
}
