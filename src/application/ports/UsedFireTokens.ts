import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/**
 * The fire tokens already used (docs/managed-trigger.md, The token checks), kept in the store so
 * that a token fires at most once, ever: across restarts of the gateway and across every replica
 * sharing the store (the files under one `$AGENT_HOME`, or one database). Each token is named
 * by an `id` — 1 to 128 letters, digits, `-` or `_` (the verifier gives the sha256 of the token's
 * `jti`, in hex) — and remembered until an instant given with it, after which its token is refused
 * for having expired anyway and the memory of it may go.
 *
 * Times are the caller's (`now`), never the store's own clock. Every method throws
 * UsedFireTokensUnavailableError (or the database's own AppError) when the store cannot be used;
 * the caller then answers that the portal should retry.
 */
export interface UsedFireTokens {
  /**
   * Remembers `id` as used until `until`, unless it is remembered already: true when it was new
   * (never remembered, forgotten, or remembered only until `now` or earlier), false when an
   * earlier use is still remembered. Atomic across every process sharing the store: of several
   * calls for one id at the same moment, on any number of gateways, exactly one gets true. When it
   * resolves true the memory is durable: a crash right after it, even of the whole machine, does
   * not forget it.
   */
  remember(id: string, until: Date, now: Date): Promise<boolean>;
  /**
   * Forgets `id`, so that it is new again: for a fire answered without doing anything (a 503),
   * which the portal may send again with the same token. Idempotent: an id not remembered is fine.
   */
  forget(id: string): Promise<void>;
  /** Forgets every id remembered until `before` or earlier. Idempotent; others are kept. */
  forgetExpired(before: Date): Promise<void>;
}

/** What a used-token id may be: short, and safe as a file name. */
export const USED_FIRE_TOKEN_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The store of used fire tokens cannot be read or written (permissions, disk, lock timeout). */
export class UsedFireTokensUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ERROR_CODES.STORE.UNAVAILABLE, message, options);
  }
}
