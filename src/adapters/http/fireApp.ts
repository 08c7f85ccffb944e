import type { RequestListener } from 'node:http';
import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import type { FireTokenVerifier } from '../../application/ports/FireTokenVerifier.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { FireOutcome } from '../../application/ports/SchedulerProvider.js';
import { errorText } from '../../domain/errors.js';
import { statusForError } from './httpStatus.js';
import { metricsHandler, type MetricsEndpoint } from './metricsRoute.js';

/** What the fire endpoint needs; `fire` is the FireJobSlot use case. */
export interface FireRouteDependencies {
  verifier: FireTokenVerifier;
  fire: { execute(input: { jobId: string; fireAt: string }): Promise<FireOutcome> };
  logger: Logger;
}

/** A fire body is two short strings; anything much larger is not one. */
const MAX_FIRE_BODY = '16kb';
const INVALID_TOKEN = { error: 'invalid fire token' } as const;

/**
 * `POST /api/cron/fire`: a trigger provider's portal fires one slot of one job.
 * In order: the bearer token is checked (401 `invalid fire token`, the reason only logged); a
 * body without `job_id` is 400; the token must be bound to that job (401); then the slot is
 * claimed: 202 `accepted` with the run going on after the answer, 200 `gone` or `stale` without a
 * run, 503 with Retry-After while stopping or when the store cannot be read. The token is checked
 * before the body is looked at, so a caller without one learns nothing.
 */
export function fireRoute(dependencies: FireRouteDependencies): Router {
  const { verifier, fire, logger } = dependencies;
  const router = Router();
  router.post('/api/cron/fire', express.text({ type: () => true, limit: MAX_FIRE_BODY }), async (req: Request, res: Response) => {
    const body = parseBody(req.body);
    const jobId = typeof body.job_id === 'string' && body.job_id.trim() !== '' ? body.job_id : null;
    const token = bearerToken(req.headers.authorization);
    if (token === null) {
      logger.warn('fire refused: no bearer token in Authorization', { job: jobId });
      res.status(401).json(INVALID_TOKEN);
      return;
    }
    const verdict = await verifier.verify(token, jobId);
    if (!verdict.valid) {
      logger.warn(`fire refused: the token is invalid: ${verdict.reason}`, { job: jobId });
      res.status(401).json(INVALID_TOKEN);
      return;
    }
    if (jobId === null) {
      res.status(400).json({ error: 'missing job_id' });
      return;
    }
    const outcome = await fire.execute({ jobId, fireAt: typeof body.fire_at === 'string' ? body.fire_at : '' });
    switch (outcome.status) {
      case 'accepted':
        res.status(202).json({ status: 'accepted', job_id: jobId });
        return;
      case 'gone':
      case 'stale':
        res.status(200).json({ status: outcome.status });
        return;
      case 'unavailable':
        // Nothing was done: the portal may retry with the same token.
        verdict.release();
        res.status(503).set('Retry-After', String(outcome.retryAfterSeconds)).json({ error: 'Fires cannot be taken right now; retry later' });
        return;
    }
  });
  router.all('/api/cron/fire', (_req, res) => {
    res.status(405).set('Allow', 'POST').json({ error: 'Method not allowed' });
  });
  router.use(fireErrors(logger));
  return router;
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
  return app;
}

function parseBody(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'string') return {};
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
