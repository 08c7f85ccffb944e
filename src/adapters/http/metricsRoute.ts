import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../application/ports/Logger.js';
import { errorText } from '../../domain/errors.js';
import { sendJson } from './jsonAnswer.js';

/** What `GET /metrics` serves: the metrics in the Prometheus text format. */
export interface MetricsExposition {
  /** The Content-Type of `render()`'s text. */
  readonly contentType: string;
  render(): Promise<string>;
}

/** `GET /metrics` on the gateway's listener; `token` (`extra.metrics_token`), when set, is required as a bearer token. */
export interface MetricsEndpoint {
  exposition: MetricsExposition;
  token: string | null;
}

/**
 * Answers `GET /metrics` (and HEAD): 401 with `WWW-Authenticate: Bearer` when a token is set and
 * the request does not carry it (compared in constant time), else the metrics; 500 in JSON when
 * they cannot be rendered.
 */
export function metricsHandler(endpoint: MetricsEndpoint, logger: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = endpoint.token === null ? null : digest(endpoint.token);
  return (req, res) => {
    if (expected !== null && !carriesToken(req.headers.authorization, expected)) {
      sendJson(res, 401, { error: 'Missing or wrong bearer token' }, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
      return;
    }
    endpoint.exposition.render().then(
      (text) => {
        res.writeHead(200, {
          'Content-Type': endpoint.exposition.contentType,
          'Content-Length': Buffer.byteLength(text),
          'Cache-Control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        logger.error('the metrics could not be rendered', { error: errorText(error) });
        sendJson(res, 500, { error: 'Internal error' });
      },
    );
  };
}

/** Hashing both sides first makes them the same length, so the comparison leaks nothing, not even the length. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function carriesToken(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer +(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}
