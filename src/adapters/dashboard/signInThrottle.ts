import type { Clock } from '../../application/ports/Clock.js';
import type { Logger } from '../../application/ports/Logger.js';

/** Wrong tokens one client address may try before its attempts are refused for a while. */
export const FREE_FAILURES_PER_ADDRESS = 5;
/** Wrong tokens all addresses together may try before every attempt is refused for a while. */
export const FREE_FAILURES_OVERALL = 20;
/** The first wait, after the last free failure; each further failure doubles it. */
export const FIRST_WAIT_MS = 60_000;
/** The longest wait. */
export const LONGEST_WAIT_MS = 15 * 60_000;
/** A count of failures is forgotten once no failure came for this long; a backoff is logged at most this often per address. */
const QUIET_MS = 3600_000;
/** Addresses remembered at most; the longest quiet go first (a flood of addresses cannot grow memory). */
const MOST_ADDRESSES = 10_000;

interface Failures {
  count: number;
  last: number;
  blockedUntil: number;
  /** When this key's backoff was last logged. */
  loggedAt: number | null;
}

/**
 * How often the dashboard token may be guessed, at sign-in or as a bearer token: per client
 * address and over all addresses. After the free failures each further one makes the key wait
 * twice as long (1, 2, 4, 8, then 15 minutes). While a key waits, an attempt is refused without
 * its token being looked at (the right token too: otherwise the refusal would tell a right guess
 * from a wrong one) and counts for nothing. A backoff is logged once an hour per address.
 */
export class SignInThrottle {
  private readonly addresses = new Map<string, Failures>();
  private overall: Failures = fresh();

  constructor(
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Whole seconds `address` must wait before a token of it is looked at again; 0: none. */
  waitSeconds(address: string): number {
    const now = this.clock.now().getTime();
    const until = Math.max(this.overall.blockedUntil, this.addresses.get(address)?.blockedUntil ?? 0);
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  /** A wrong token from `address` (`what`: "sign-in" or "bearer token", for the log). */
  failed(address: string, what: string): void {
    const now = this.clock.now().getTime();
    const own = this.addresses.get(address) ?? fresh();
    this.addresses.delete(address);
    this.addresses.set(address, own);
    while (this.addresses.size > MOST_ADDRESSES) this.addresses.delete(this.addresses.keys().next().value!);
    const ownWait = count(own, now, FREE_FAILURES_PER_ADDRESS);
    const allWait = count(this.overall, now, FREE_FAILURES_OVERALL);

    if (ownWait > 0 && shouldLog(own, now)) {
      this.log.warn(
        `dashboard: ${own.count} attempts from ${address} had a wrong token; its attempts are refused for ${spoken(ownWait)}, ` +
          'twice as long after each further wrong one, up to 15 minutes (this is logged once an hour per address)',
      );
    }
    if (allWait > 0 && shouldLog(this.overall, now)) {
      this.log.warn(
        `dashboard: ${this.overall.count} attempts in all had a wrong token; every sign-in and bearer token is refused for ${spoken(allWait)}, ` +
          'twice as long after each further wrong one, up to 15 minutes (this is logged once an hour)',
      );
    }
    if (ownWait === 0 && allWait === 0) this.log.warn(`dashboard: a ${what} from ${address} with a wrong token was refused`);
  }

  /** The right token from `address`: its own count starts again (the overall one does not). */
  succeeded(address: string): void {
    this.addresses.delete(address);
  }
}

function fresh(): Failures {
  return { count: 0, last: 0, blockedUntil: 0, loggedAt: null };
}

/** Counts a failure on `key`; returns how long it now waits (0: not at all). */
function count(key: Failures, now: number, free: number): number {
  if (now - key.last >= QUIET_MS) key.count = 0;
  key.count += 1;
  key.last = now;
  if (key.count < free) return 0;
  const wait = Math.min(FIRST_WAIT_MS * 2 ** Math.min(key.count - free, 20), LONGEST_WAIT_MS);
  key.blockedUntil = now + wait;
  return wait;
}

function shouldLog(key: Failures, now: number): boolean {
  if (key.loggedAt !== null && now - key.loggedAt < QUIET_MS) return false;
  key.loggedAt = now;
  return true;
}

function spoken(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  return seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}` : `${seconds} seconds`;
}
