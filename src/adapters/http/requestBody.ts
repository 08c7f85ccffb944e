import type { IncomingMessage } from 'node:http';

/** How reading a request's body ended: the whole body, or why not. */
export type BodyRead = { kind: 'complete'; body: Buffer } | { kind: 'too_large' } | { kind: 'timeout' } | { kind: 'aborted' };

/** Reads the body up to `maxBytes`, stopping as soon as it is over; gives up after `timeoutMs`. */
export function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (read: BodyRead) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      if (read.kind !== 'complete') req.pause();
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) settle({ kind: 'too_large' });
      else chunks.push(chunk);
    };
    const onEnd = () => settle({ kind: 'complete', body: Buffer.concat(chunks, size) });
    const onAbort = () => settle({ kind: 'aborted' });
    const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

/** The Content-Length the client declared, or null (chunked, or none). Node has checked its form. */
export function declaredLength(req: IncomingMessage): number | null {
  const value = req.headers['content-length'];
  if (value === undefined) return null;
  const length = Number(value);
  return Number.isSafeInteger(length) ? length : Number.POSITIVE_INFINITY;
}
