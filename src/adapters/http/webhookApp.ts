import { STATUS_CODES, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Request, type Router } from 'express';
import type { Logger } from '../../application/ports/Logger.js';
import type { Metrics } from '../../application/ports/Metrics.js';
import { NO_TRACING, type RunTracing } from '../../application/ports/RunTracing.js';
import type { WebhookRoutes } from '../../application/ports/WebhookRoutes.js';
import type { WebhookListenerSettings } from '../../application/ports/WebhookSettings.js';
import type { AcceptWebhookInput, WebhookOutcome } from '../../application/webhook/AcceptWebhook.js';
import type { WebhookHeaders } from '../../domain/webhook/webhookRequest.js';
import { errorText } from '../../domain/errors.js';
import { isRouteName } from '../../domain/webhook/WebhookRoute.js';
import { fireRoute, fireShortcut, type FireRouteDependencies } from './fireApp.js';
import { answerEarly, sendJson } from './jsonAnswer.js';
import { awaitingContinue } from './webhookServer.js';
import { statusForError } from './httpStatus.js';
import { metricsHandler, type MetricsEndpoint } from './metricsRoute.js';
import { declaredLength, readBody } from './requestBody.js';

/** What the listener needs; `acceptWebhook` is the AcceptWebhook use case (a singleton). */
export interface WebhookAppDependencies {
  routes: WebhookRoutes;
  acceptWebhook: { execute(input: AcceptWebhookInput): Promise<WebhookOutcome> };
  settings: Pick<WebhookListenerSettings, 'maxBodyBytes' | 'bodyReadTimeoutMs'>;
  logger: Logger;
  /** When set, `POST /api/cron/fire` is served too (fireApp.ts). */
  fire?: FireRouteDependencies;
  /** When set, `GET /metrics` is served (metricsRoute.ts). */
  metricsEndpoint?: MetricsEndpoint;
  /** Counts the answers to requests under `/webhooks/`. */
  metrics?: Pick<Metrics, 'webhookRequest'>;
  /** When set, `POST /slack/events` is served too: the Slack receiver's route (adapters/inbound/SlackEventsSource.ts). */
  slackEvents?: Router;
  /** A span per request that reaches the accept path, whose traceparent the accepted event keeps (docs/traces.md). */
  tracing?: RunTracing;
}

/**
 * The plain shape of a webhook POST's path (`/webhooks/<name>` with a name of letters, digits,
 * `_` and `-`, an optional query), which is served without Express's dispatch; see below.
 */
const PLAIN_WEBHOOK_PATH = /^\/webhooks\/([A-Za-z0-9_-]+)(?:\?.*)?$/;
/** Any request under `/webhooks/`, as counted by `agent_webhook_requests_total`. */
const WEBHOOK_PATH = /^\/webhooks\//i;

/**
 * The webhook listener's HTTP face (docs/webhooks.md): `GET /health`, `GET /metrics` when given a
 * `metricsEndpoint` (and, given `metrics`, answers under `/webhooks/` counted by status), and `POST /webhooks/:route`
 * checked in order — route (404) → size, from Content-Length before reading and while reading
 * (413) → a body that does not arrive in time (408) → the AcceptWebhook use case, whose outcome
 * `replyFor` answers. The body is read here, as raw bytes, only once the route is known. Other paths
 * are 404 and other methods on these paths 405, all with a JSON body `{"error": …}`; nothing a
 * client sends leads to a 5xx, and no answer carries a stack trace. Given `slackEvents`, the Slack
 * receiver's `POST /slack/events` is served too, ahead of the 404 for unknown paths.
 *
 * It is an Express app, with shortcuts in front: a POST whose path has the plain shape above
 * goes straight to the same handler that the app's `/webhooks/:route` uses (and, with `fire`, a
 * plain `POST /api/cron/fire` to the fire endpoint's: fireShortcut). Express's per-request
 * dispatch (prototype swaps, the router's layer walk, parameter decoding) measured as much as the
 * rest of the accept path put together — half the throughput and twice the p99 under
 * `npm run bench:webhook` — and this is the one path that takes load. Every other request
 * (percent-encoded or oddly cased paths, trailing slashes, other methods, /health, unknown
 * paths) goes through Express as before, so both ways answer alike.
 *
 * Serve it with `createWebhookServer` (webhookServer.ts), which sets the connection timeouts.
 */
export function createWebhookApp(dependencies: WebhookAppDependencies): RequestListener {
  const { logger } = dependencies;
  const handlePost = webhookPostHandler(dependencies);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);

  app.get('/health', (_req, res) => {
    res.status(200).json({ status: 'ok', platform: 'webhook' });
  });

  app.post('/webhooks/:route', (req: Request<{ route: string }>, res) => handlePost(req.params.route, req, res));

  app.all('/health', (req, res) => {
    answerEarly(req, res, 405, { error: 'Method not allowed' }, { Allow: 'GET, HEAD' });
  });
  app.all('/webhooks/:route', (req: Request<{ route: string }>, res) => {
    if (!isRouteName(req.params.route)) answerEarly(req, res, 404, { error: 'Unknown route' });
    else answerEarly(req, res, 405, { error: 'Method not allowed' }, { Allow: 'POST' });
  });

  if (dependencies.metricsEndpoint) {
    const serveMetrics = metricsHandler(dependencies.metricsEndpoint, logger);
    app.get('/metrics', (req, res) => serveMetrics(req, res));
    app.all('/metrics', (req, res) => {
      answerEarly(req, res, 405, { error: 'Method not allowed' }, { Allow: 'GET, HEAD' });
    });
  }

  if (dependencies.fire) app.use(fireRoute(dependencies.fire));
  if (dependencies.slackEvents) app.use(dependencies.slackEvents);

  app.use((req, res) => {
    answerEarly(req, res, 404, { error: 'Not found' });
  });

  app.use(errorHandler(logger));

  const { metrics } = dependencies;
  const fire = dependencies.fire ? fireShortcut(dependencies.fire) : null;
  return (req, res) => {
    if (fire?.(req, res)) return;
    if (metrics && WEBHOOK_PATH.test(req.url ?? '')) res.once('finish', () => metrics.webhookRequest(res.statusCode));
    const plain = req.method === 'POST' ? PLAIN_WEBHOOK_PATH.exec(req.url ?? '') : null;
    if (plain === null) {
      app(req, res);
      return;
    }
    handlePost(plain[1]!, req, res).catch((error: unknown) => answerUnexpected(logger, error, req, res, plain[0]!.split('?')[0]!));
  };
}

/** `POST /webhooks/<name>`, for Express's route and for the shortcut alike. */
function webhookPostHandler(dependencies: WebhookAppDependencies) {
  const { routes, acceptWebhook, settings, logger } = dependencies;
  const tracing = dependencies.tracing ?? NO_TRACING;
  return async (name: string, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // A name no route can have (`..`, `a/b` decoded from `a%2Fb`, over-long) is not looked up at all.
    if (!isRouteName(name)) {
      logger.debug('webhook refused: unknown route', { route: name });
      answerEarly(req, res, 404, { error: 'Unknown route' });
      return;
    }
    let route;
    try {
      route = await routes.find(name);
    } catch (error) {
      logger.error('webhook routes could not be read', { error: errorText(error) });
      answerEarly(req, res, 503, { error: 'Routes unavailable; retry later' }, { 'Retry-After': '30' });
      return;
    }
    if (!route) {
      logger.debug('webhook refused: unknown route', { route: name });
      answerEarly(req, res, 404, { error: 'Unknown route' });
      return;
    }

    const declared = declaredLength(req);
    if (declared !== null && declared > settings.maxBodyBytes) {
      logger.warn('webhook refused: payload too large', { route: name, content_length: declared, max_body_bytes: settings.maxBodyBytes });
      answerEarly(req, res, 413, { error: 'Payload too large' });
      return;
    }

    if (awaitingContinue.delete(req)) res.writeContinue();
    const read = await readBody(req, settings.maxBodyBytes, settings.bodyReadTimeoutMs);
    switch (read.kind) {
      case 'too_large':
        logger.warn('webhook refused: payload too large', { route: name, max_body_bytes: settings.maxBodyBytes });
        answerEarly(req, res, 413, { error: 'Payload too large' });
        return;
      case 'timeout':
        logger.warn('webhook refused: the body did not arrive in time', { route: name, timeout_ms: settings.bodyReadTimeoutMs });
        answerEarly(req, res, 408, { error: 'Request timeout' });
        return;
      case 'aborted':
        req.socket.destroy();
        return;
    }

    const trace = tracing.start({ kind: 'webhook_request', route: route.name });
    const outcome = await trace.within(() =>
      acceptWebhook.execute({
        route,
        rawBody: read.body,
        headers: headersOf(req),
        contentType: req.headers['content-type'] ?? null,
        ...(trace.traceparent !== null ? { traceparent: trace.traceparent } : {}),
      }),
    );
    const reply = replyFor(outcome);
    trace.end({
      httpStatus: reply.status,
      outcome: outcome.kind,
      ...(outcome.kind === 'accepted'
        ? { webhook: { event: outcome.event, deliveryId: outcome.deliveryId, eventId: outcome.eventId } }
        : {}),
      ...(reply.status >= 500 ? { error: 'the event could not be stored' } : {}),
    });
    sendJson(res, reply.status, reply.body, reply.headers);
  };
}

interface WebhookReply {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * The answer to each outcome of AcceptWebhook: 401, 429 with Retry-After, 415 with Accept-Post
 * (the media types the route takes), 400, 200 ignored or duplicate, 503 with Retry-After so that
 * the sender retries, 202 accepted.
 */
export function replyFor(outcome: WebhookOutcome): WebhookReply {
  switch (outcome.kind) {
    case 'refused_signature':
      return { status: 401, body: { error: 'Invalid signature' } };
    case 'rate_limited':
      return { status: 429, body: { error: 'Rate limit exceeded' }, headers: { 'Retry-After': String(outcome.retryAfterSeconds) } };
    case 'unsupported_media_type':
      return {
        status: 415,
        body: { error: unsupportedMediaTypeText(outcome.mediaType, outcome.accepted) },
        headers: { 'Accept-Post': outcome.accepted.join(', ') },
      };
    case 'malformed_body':
      return { status: 400, body: { error: 'Malformed JSON' } };
    case 'ignored':
      return outcome.reason === 'event'
        ? { status: 200, body: { status: 'ignored', event: outcome.event } }
        : { status: 200, body: { status: 'ignored', reason: 'filter', route: outcome.route } };
    case 'duplicate':
      return { status: 200, body: { status: 'duplicate', delivery_id: outcome.deliveryId } };
    case 'unavailable':
      return {
        status: 503,
        body: { error: 'Could not store the event; retry later' },
        headers: { 'Retry-After': String(outcome.retryAfterSeconds) },
      };
    case 'accepted':
      return { status: 202, body: { status: 'accepted', route: outcome.route, event: outcome.event, delivery_id: outcome.deliveryId } };
  }
}

/** The longest media type a 415 answer repeats: the header may be kilobytes of anything. */
const MEDIA_TYPE_SHOWN = 100;

/** The sentence of a 415: the media type sent (or that none was) and those the route takes. */
function unsupportedMediaTypeText(mediaType: string | null, accepted: readonly string[]): string {
  const sent =
    mediaType === null
      ? 'The request has no Content-Type'
      : `Content-Type ${JSON.stringify(mediaType.length > MEDIA_TYPE_SHOWN ? `${mediaType.slice(0, MEDIA_TYPE_SHOWN)}…` : mediaType)} is not taken here`;
  const types = accepted.length > 1 ? `${accepted.slice(0, -1).join(', ')} or ${accepted.at(-1)}` : accepted.join('');
  return `${sent}; send ${types} (a form may carry the JSON in its payload field).`;
}

/**
 * Anything that escaped the handlers, answered with `statusForError`'s status: Express's own
 * client errors (a path whose percent-encoding is broken is a 400) keep their 4xx status;
 * anything else is a 500 and is logged. The body names the status only: never a message or a
 * stack trace.
 */
function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => answerUnexpected(logger, error, req, res, req.path);
}

function answerUnexpected(logger: Logger, error: unknown, req: IncomingMessage, res: ServerResponse, path: string): void {
  const status = statusForError(error);
  if (status >= 500) logger.error('webhook listener: unexpected error', { path, error: errorText(error) });
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  answerEarly(req, res, status, { error: STATUS_CODES[status] ?? 'Error' });
}

/** Headers by lower-case name, a repeated header joined by `, `; a header named `__proto__` is only a name. */
function headersOf(req: IncomingMessage): WebhookHeaders {
  const headers: Record<string, string> = {};
  for (const name in req.headers) {
    const raw = req.headers[name];
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (name === '__proto__') Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
    else headers[name] = value;
  }
  return headers;
}
