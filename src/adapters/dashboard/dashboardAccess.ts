/**
 * Who a request comes from: whether it is addressed to a name the dashboard serves, whether it
 * gave the token (counted by the sign-in backoff), and its session cookie.
 */
import type { Request, Response } from 'express';
import type { DashboardDependencies } from './dashboardDependencies.js';
import { hostOfHeader, LOOPBACK_NAMES, normalHost } from './hosts.js';
import { cookieValue, DashboardSessions, SECURE_SESSION_COOKIE, SESSION_COOKIE } from './sessions.js';
import { SignInThrottle } from './signInThrottle.js';

/** The methods that change nothing: the others need the token, or a session and its CSRF token. */
export const READING = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A session the dashboard opened, as DashboardSessions finds it. */
export type Session = NonNullable<ReturnType<DashboardSessions['find']>>;

/** The access helpers of one dashboard (dashboardAccess). */
export type DashboardAccess = ReturnType<typeof dashboardAccess>;

/** The access helpers of one dashboard, over its sessions and its sign-in backoff. */
export function dashboardAccess(deps: DashboardDependencies) {
  const clock = deps.clock ?? { now: () => new Date() };
  const sessions = new DashboardSessions(deps.token, () => clock.now().getTime());
  const throttle = new SignInThrottle(clock, deps.log);
  const trustProxy = deps.trustProxy === true;
  const servedHosts = new Set([...LOOPBACK_NAMES, ...(deps.token !== null ? (deps.allowedHosts ?? []).map(normalHost) : [])]);

  /** The host the request is addressed to (behind a trusted proxy, the one the client asked the proxy for). */
  function requestedHost(request: Request): string | undefined {
    const forwarded = trustProxy ? request.headers['x-forwarded-host'] : undefined;
    const host = typeof forwarded === 'string' && forwarded.trim() !== '' ? forwarded.split(',')[0] : request.headers.host;
    return host?.trim();
  }

  /** Why the request is not answered (its Host is not a name the dashboard serves), or null. */
  function hostRefusal(request: Request): string | null {
    const given = requestedHost(request);
    const host = hostOfHeader(given);
    if (host !== null && servedHosts.has(host)) return null;
    const shown = given ? `"${given.slice(0, 100)}"` : null;
    if (deps.token === null) {
      return `A dashboard without a token answers only at 127.0.0.1, localhost or [::1], ${shown ? `not at ${shown}` : 'and this request names no host'}; open it at one of those, or set a dashboard token and add the name to dashboard.allowed_hosts.`;
    }
    return `The dashboard does not answer ${shown ? `at ${shown}` : 'a request that names no host'}; open it at the address it listens on, or add the name to dashboard.allowed_hosts.`;
  }

  /** The session cookie's name: `__Host-` prefixed over https, the plain name over http, which cannot set `Secure`. */
  const cookieName = (request: Request) => (request.secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE);
  const cookieAttributes = (request: Request) => `Path=/; HttpOnly; SameSite=Strict${request.secure ? '; Secure' : ''}`;
  const setCookie = (request: Request, response: Response, id: string) =>
    response.setHeader('set-cookie', `${cookieName(request)}=${id}; ${cookieAttributes(request)}`);
  /** The client's address (behind a trusted proxy, the one the proxy saw), for the sign-in backoff. */
  const clientOf = (request: Request) =>
    (request.ip ?? request.socket.remoteAddress ?? 'an unknown address').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  /** The sentence of a 429 while `seconds` remain of a backoff. */
  const waitSentence = (seconds: number) => `Too many wrong tokens were tried; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
  /**
   * Whether `given` is the token, counted by the backoff: 'wait' (with the seconds) while the
   * client's attempts are refused, whatever it gave; otherwise 'right' or 'wrong'.
   */
  const tokenVerdict = (
    request: Request,
    given: string | undefined,
    what: string,
  ): { kind: 'right' | 'wrong' } | { kind: 'wait'; seconds: number } => {
    const client = clientOf(request);
    const seconds = throttle.waitSeconds(client);
    if (seconds > 0) return { kind: 'wait', seconds };
    if (sessions.tokenMatches(given)) {
      throttle.succeeded(client);
      return { kind: 'right' };
    }
    throttle.failed(client, what);
    return { kind: 'wrong' };
  };

  /** The session of the request; without a token configured, one is opened on the first visit. */
  const sessionOf = (request: Request, response: Response): Session | null => {
    const id = cookieValue(request.headers.cookie, cookieName(request));
    const session = sessions.find(id);
    if (session || deps.token !== null) return session;
    const opened = sessions.open();
    setCookie(request, response, opened);
    return sessions.find(opened);
  };

  const bearer = (request: Request) => /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim();
  /** What the request's bearer token is, counted by the backoff: 'none' without one (or without a token configured). */
  const bearerVerdict = (request: Request) => {
    const token = bearer(request);
    if (deps.token === null || token === undefined) return { kind: 'none' } as const;
    return tokenVerdict(request, token, 'bearer token');
  };

  return {
    sessions,
    requestedHost,
    hostRefusal,
    cookieName,
    cookieAttributes,
    setCookie,
    waitSentence,
    tokenVerdict,
    sessionOf,
    bearerVerdict,
  };
}
