import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import type { FireTokenVerifier } from '../../application/ports/FireTokenVerifier.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { FireOutcome } from '../../application/ports/SchedulerProvider.js';
import { errorText } from '../../domain/errors.js';
import { statusForError } from './httpStatus.js';
import { answerEarly, sendJson } from './jsonAnswer.js';
import { metricsHandler, type MetricsEndpoint } from './metricsRoute.js';
import { awaitingContinue } from './webhookServer.js';

/** What the fire endpoint needs; `fire` is the FireJobSlot use case. */
export interface FireRouteDependencies {
  verifier: FireTokenVerifier;
  fire: { execute(input: { jobId: string; fireAt: string }): Promise<FireOutcome> };
  logger: Logger;
}

/** A fire body is two short strings; anything much larger is not one. */
const MAX_FIRE_BODY = '16kb';
const MAX_FIRE_BODY_BYTES = 16 * 1024;
const INVALID_TOKEN = { error: 'invalid fire token' } as const;

/** The fire endpoint's path. */
export const FIRE_PATH = '/api/cron/fire';

/**
 * `POST /api/cron/fire`: a trigger provider's portal fires one slot of one job.
 * In order: the bearer token is checked (401 `invalid fire token`, the reason only logged); a
 * body without `job_id` is 400; the token must be bound to that job, and to that slot when it
 * names one, and not used before (401; 503 when the used tokens cannot be looked at); then the slot is
 * claimed: 202 `accepted` with the run going on after the answer, 200 `gone` or `stale` without a
 * run, 503 with Retry-After while stopping or when the store cannot be read. The token is checked
 * before the body is looked at, so a caller without one learns nothing.
 *
 * Mount it with `fireShortcut` in front (as createFireApp and the webhook app do).
 */
export function fireRoute(dependencies: FireRouteDependencies): Router {
  const handle = fireHandler(dependencies);
  const router = Router();
  router.post(FIRE_PATH, express.text({ type: () => true, limit: MAX_FIRE_BODY }), (req: Request, res: Response) =>
    handle(typeof req.body === 'string' ? req.body : '', req.headers.authorization, res),
  );
  router.all(FIRE_PATH, (_req, res) => {
    res.status(405).set('Allow', 'POST').json({ error: 'Method not allowed' });
  });
  router.use(fireErrors(dependencies.logger));
  return router;
}

/**
 * The fire endpoint without Express's dispatch, for the one request that takes load: a POST to
 * exactly `/api/cron/fire` whose body is plain UTF-8 (no Content-Encoding, no other charset).
 * Express's dispatch and body parser took a third of the gateway's time per fire answered (0.6
 * against 0.4 ms of CPU, a burst of fires with the jobs in PostgreSQL), as they did on the webhook
 * path (webhookApp.ts). Returns whether it took the request; any other request (another path or
 * method, a compressed body, another charset) is left to Express, which answers alike.
 */
export function fireShortcut(dependencies: FireRouteDependencies): (req: IncomingMessage, res: ServerResponse) => boolean {
  const handle = fireHandler(dependencies);
  return (req, res) => {
    if (req.method !== 'POST' || req.url !== FIRE_PATH || !plainUtf8Body(req)) return false;
    void (async () => {
      const body = await readFireBody(req, res);
      if (body === 'too_large') answerEarly(req, res, 413, { error: 'Payload too large' });
      else if (body === 'aborted') req.socket.destroy();
      else await handle(body, req.headers.authorization, res);
    })().catch((error: unknown) => {
      dependencies.logger.error('the fire endpoint failed unexpectedly', { error: errorText(error) });
      if (res.headersSent) req.socket.destroy();
      else sendJson(res, 500, { error: 'Internal error' });
    });
    return true;
  };
}

/** The checks and the claim of one fire, with its body read; both ways in share it. */
function fireHandler(
  dependencies: FireRouteDependencies,
): (rawBody: string, authorization: string | undefined, res: ServerResponse) => Promise<void> {
  const { verifier, fire, logger } = dependencies;
  return async (rawBody, authorization, res) => {
    const body = parseBody(rawBody);
    const jobId = typeof body.job_id === 'string' && body.job_id.trim() !== '' ? body.job_id : null;
    const token = bearerToken(authorization);
    if (token === null) {
      logger.warn('fire refused: no bearer token in Authorization', { job: jobId });
      sendJson(res, 401, INVALID_TOKEN);
      return;
    }
    const fireAt = typeof body.fire_at === 'string' ? body.fire_at : null;
    const verdict = await verifier.verify(token, jobId, fireAt);
    if (!verdict.valid && verdict.retryAfterSeconds !== undefined) {
      logger.error(`fire not taken: ${verdict.reason}`, { job: jobId });
      sendJson(res, 503, { error: 'Fires cannot be taken right now; retry later' }, { 'Retry-After': String(verdict.retryAfterSeconds) });
      return;
    }
    if (!verdict.valid) {
      logger.warn(`fire refused: the token is invalid: ${verdict.reason}`, { job: jobId });
      sendJson(res, 401, INVALID_TOKEN);
      return;
    }
    if (jobId === null) {
      sendJson(res, 400, { error: 'missing job_id' });
      return;
    }
    const outcome = await fire.execute({ jobId, fireAt: fireAt ?? '' });
    switch (outcome.status) {
      case 'accepted':
        sendJson(res, 202, { status: 'accepted', job_id: jobId });
        return;
      case 'gone':
      case 'stale':
        sendJson(res, 200, { status: outcome.status });
        return;
      case 'unavailable':
        // Nothing was done: the portal may retry with the same token, once it is forgotten.
        await verdict.release();
        sendJson(res, 503, { error: 'Fires cannot be taken right now; retry later' }, { 'Retry-After': String(outcome.retryAfterSeconds) });
        return;
    }
  };
}

/** No Content-Encoding (or identity) and no charset but UTF-8: what the shortcut reads itself. */
function plainUtf8Body(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return false;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/** The body as text, or why it was not read: over MAX_FIRE_BODY_BYTES (then left unread) or cut off. */
function readFireBody(req: IncomingMessage, res: ServerResponse): Promise<string | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_FIRE_BODY_BYTES) {
      resolve('too_large');
      return;
    }
    // Asked with `Expect: 100-continue` (webhookServer.ts): the size is fine, so the body is invited.
    if (awaitingContinue.delete(req)) res.writeContinue();
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: string | 'too_large' | 'aborted') => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      if (typeof result !== 'string') req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_FIRE_BODY_BYTES) settle('too_large');
      else chunks.push(chunk);
    };
    const onEnd = () => settle(Buffer.concat(chunks, size).toString('utf8'));
    const onAbort = () => settle('aborted');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onAbort);
  });
}

/**
 * The listener's app when only the fire endpoint is served (webhooks off): `GET /health`, the
 * fire endpoint, `GET /metrics` with `metricsEndpoint`, and 404 in JSON for anything else.
 */
export function createFireApp(dependencies: FireRouteDependencies, metricsEndpoint?: MetricsEndpoint): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  app.get('/health', (_req, res) => {
    res.status(200).json({ status: 'ok' });
  });
  if (metricsEndpoint) {
    const serveMetrics = metricsHandler(metricsEndpoint, dependencies.logger);
    app.get('/metrics', (req, res) => serveMetrics(req, res));
  }
  app.use(fireRoute(dependencies));
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found' });
  });
  app.use(fireErrors(dependencies.logger));
  const shortcut = fireShortcut(dependencies);
  return (req, res) => {
    if (!shortcut(req, res)) app(req, res);
  };
}

function parseBody(raw: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer +([A-Za-z0-9_.~+/=-]+)\s*$/i.exec(header ?? '');
  return match ? match[1]! : null;
}

/**
 * A body too large or cut short is the client's fault (4xx, `statusForError`); nothing else
 * reaches here but bugs.
 */
function fireErrors(logger: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const status = statusForError(error);
    if (status < 500) {
      res.status(status).json({ error: status === 413 ? 'Payload too large' : 'Bad request' });
      return;
    }
    logger.error('the fire endpoint failed unexpectedly', { error: errorText(error) });
    res.status(500).json({ error: 'Internal error' });
  };
}
