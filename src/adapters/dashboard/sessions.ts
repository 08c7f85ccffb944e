import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The session cookie's name over plain http (a `__Host-` cookie must be `Secure`, which http cannot set). */
export const SESSION_COOKIE = 'agent_dashboard';
/** The session cookie's name over https: `__Host-` binds it to this origin, `Secure` and `Path=/`, no `Domain`. */
export const SECURE_SESSION_COOKIE = '__Host-agent_dashboard';
/** How long a session lasts without use. */
const IDLE_MS = 12 * 3600_000;
/** Sessions kept at most; the oldest go first (a flood of sign-ins cannot grow memory). */
const MOST_SESSIONS = 1000;

interface Session {
  csrf: string;
  lastUsed: number;
}

/**
 * The dashboard's sign-in sessions, in this gateway's memory (a restart signs everyone out): a
 * random id in an HttpOnly, SameSite=Strict cookie (over https `__Host-` and Secure), and with each a CSRF token that every form
 * that changes something carries.
 */
export class DashboardSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly token: string | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `given` is the dashboard token (compared in constant time). Without a token, anything is. */
  tokenMatches(given: string | undefined): boolean {
    if (this.token === null) return true;
    if (typeof given !== 'string') return false;
    const digest = (text: string) => createHash('sha256').update(text).digest();
    return timingSafeEqual(digest(given), digest(this.token));
  }

  /** Starts a session; returns its id. */
  open(): string {
    const id = randomBytes(24).toString('base64url');
    this.sessions.set(id, { csrf: randomBytes(24).toString('base64url'), lastUsed: this.now() });
    while (this.sessions.size > MOST_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return id;
  }

  /** The live session `id` names (and marks it used), or null. */
  find(id: string | undefined): Session | null {
    if (id === undefined) return null;
    const session = this.sessions.get(id);
    if (!session) return null;
    if (this.now() - session.lastUsed > IDLE_MS) {
      this.sessions.delete(id);
      return null;
    }
    session.lastUsed = this.now();
    return session;
  }

  /**
   * A session for one request that proved itself another way (the bearer token): it is not
   * stored and has no cookie, so it lasts only as long as the request.
   */
  static forOneRequest(): Session {
    return { csrf: randomBytes(24).toString('base64url'), lastUsed: Date.now() };
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id);
  }

  /** Whether `given` is the CSRF token of `session` (constant time). */
  static csrfMatches(session: Session, given: unknown): boolean {
    if (typeof given !== 'string' || given.length !== session.csrf.length) return false;
    return timingSafeEqual(Buffer.from(given), Buffer.from(session.csrf));
  }
}

/** The value of the cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}
