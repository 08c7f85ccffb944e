import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, errorText, InvalidInputError } from '../../domain/errors.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';
import { chartLibrary } from './chartLibrary.js';
import { CHARTS_JS, SHORTCUTS_JS } from './pageScripts.js';
import { dashboardAccess, READING } from './dashboardAccess.js';
import { dashboardApi } from './dashboardApi.js';
import type { DashboardDependencies } from './dashboardDependencies.js';
import { pageResponses, registerPages } from './dashboardPages.js';
import { registerRunRoutes } from './runRoutes.js';
import { cookieValue, DashboardSessions } from './sessions.js';
import { notFoundPage, signInPage } from './views.js';

/** Every answer's security headers. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * The dashboard (docs/dashboard.md): server-rendered pages over the CLI's own use cases, and a
 * JSON API under /api. Signing in with the token gives a session cookie (HttpOnly,
 * SameSite=Strict); `Authorization: Bearer <token>` is taken on every method, by the API and by
 * the pages (a browser never sends that header on its own, so it needs no CSRF token). A change
 * made with the session cookie carries the session's CSRF token; every value from a job, a model
 * or a payload is rendered as text; a strict Content-Security-Policy allows only the dashboard's
 * own style sheet and script, and no page may frame it.
 *
 * It answers only requests addressed to a name it serves (421 otherwise: a page whose name was
 * made to resolve to this machine, DNS rebinding, reads and changes nothing), and a token may be
 * guessed only a few times before sign-ins wait (429, SignInThrottle).
 */
export function createDashboardApp(deps: DashboardDependencies): express.Express {
  const access = dashboardAccess(deps);
  const { sessions, hostRefusal, cookieName, cookieAttributes, setCookie, waitSentence, tokenVerdict, sessionOf, bearerVerdict } = access;
  const trustProxy = deps.trustProxy === true;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Behind a proxy the socket's peer is the proxy: its X-Forwarded-For (the address it appended)
  // and X-Forwarded-Proto are taken; without trust_proxy they are ignored.
  app.set('trust proxy', trustProxy ? 1 : false);
  app.use((_request, response, next) => {
    response.set(SECURITY_HEADERS);
    next();
  });
  app.use((request, response, next) => {
    const refusal = hostRefusal(request);
    if (refusal === null) return next();
    if (isApiRequest(request)) return void response.status(421).json({ error: refusal });
    response.status(421).type('text').send(refusal);
  });
  app.use(express.urlencoded({ extended: false, limit: '64kb' }));

  app.get('/assets/dashboard.css', (_request, response) => void response.type('text/css').send(DASHBOARD_CSS));
  app.get('/assets/dashboard.js', (_request, response) => void response.type('text/javascript').send(DASHBOARD_JS));
  app.get('/assets/shortcuts.js', (_request, response) => void response.type('text/javascript').send(SHORTCUTS_JS));
  app.get('/assets/charts.js', (_request, response) => void response.type('text/javascript').send(CHARTS_JS));
  app.get('/assets/uplot.js', (_request, response) => void response.type('text/javascript').send(chartLibrary().script));
  app.get('/assets/uplot.css', (_request, response) => void response.type('text/css').send(chartLibrary().css));

  app.post('/sign-in', (request, response) => {
    if (deps.token !== null) {
      const verdict = tokenVerdict(request, typeof request.body?.token === 'string' ? request.body.token : undefined, 'sign-in');
      if (verdict.kind === 'wait') {
        response
          .status(429)
          .set('retry-after', String(verdict.seconds))
          .type('html')
          .send(signInPage(waitSentence(verdict.seconds)).text);
        return;
      }
      if (verdict.kind === 'wrong') {
        response.status(401).type('html').send(signInPage('That token is not the dashboard token; try again.').text);
        return;
      }
    }
    setCookie(request, response, sessions.open());
    response.redirect(303, '/');
  });

  app.use('/api', express.json({ limit: '64kb' }), dashboardApi(deps, access));

  // Every page below needs a session, or the Bearer token; a change with a session needs its CSRF token too.
  app.use((request, response, next) => {
    const verdict = bearerVerdict(request);
    if (verdict.kind === 'right') {
      response.locals.session = DashboardSessions.forOneRequest();
      return next();
    }
    if (verdict.kind === 'wait')
      return void response.status(429).set('retry-after', String(verdict.seconds)).type('text').send(waitSentence(verdict.seconds));
    const session = sessionOf(request, response);
    if (!session) {
      if (request.method === 'GET' && (request.path === '/' || request.accepts('html'))) {
        response
          .status(deps.token !== null && request.path === '/' ? 200 : 401)
          .type('html')
          .send(signInPage(null).text);
      } else response.status(401).type('text').send('Sign in first.');
      return;
    }
    if (!READING.has(request.method) && !DashboardSessions.csrfMatches(session, request.body?.csrf)) {
      response
        .status(403)
        .type('text')
        .send(
          'This form is out of date or did not come from the dashboard (its CSRF token is missing or wrong); reload the page and try again.',
        );
      return;
    }
    response.locals.session = session;
    next();
  });

  const { context, page } = pageResponses(deps);

  app.post('/sign-out', (request, response) => {
    sessions.close(cookieValue(request.headers.cookie, cookieName(request)));
    response.setHeader('set-cookie', `${cookieName(request)}=; ${cookieAttributes(request)}; Max-Age=0`);
    response.redirect(303, '/');
  });

  registerPages(app, deps);
  registerRunRoutes(app, deps);

  app.use((request, response) => {
    if (!response.locals.session) return void response.status(404).type('text').send('Not found.');
    page(response, notFoundPage(context(response), `There is no page at ${request.path}.`), 404);
  });
  app.use((error: unknown, request: Request, response: Response, _next: NextFunction) => {
    const isApi = isApiRequest(request);
    const clientStatus = bodyRefusal(error);
    if (clientStatus !== null) {
      const sentence =
        clientStatus === 413
          ? 'The request body is larger than the dashboard takes (64 kB).'
          : 'The request body cannot be read (for the API: send JSON with Content-Type: application/json).';
      if (isApi) return void response.status(clientStatus).json({ error: sentence });
      return void response.status(clientStatus).type('text').send(sentence);
    }
    if (error instanceof AppError) {
      const status = error instanceof InvalidInputError ? 400 : /NOT_FOUND|AMBIGUOUS/.test(error.code) ? 404 : 409;
      if (isApi) return void response.status(status).json({ error: error.message });
      if (response.locals.session) return page(response, notFoundPage(context(response), error.message), status);
      return void response.status(status).type('text').send(error.message);
    }
    deps.log.error(`dashboard: ${request.method} ${request.path} failed: ${errorText(error)}`);
    response.status(500).type('text').send('Something went wrong; the gateway log says what.');
  });
  return app;
}

/** Whether the request is one for the JSON API (answered in JSON). */
function isApiRequest(request: Request): boolean {
  return request.path.startsWith('/api/') || request.path === '/api' || request.baseUrl === '/api';
}

/** The status of a request body the parsers refused (413 too large, 400 unreadable), or null. */
function bodyRefusal(error: unknown): number | null {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') return 413;
  if ((typeof type === 'string' && type.startsWith('entity.')) || type === 'encoding.unsupported' || type === 'charset.unsupported')
    return 400;
  return null;
}
