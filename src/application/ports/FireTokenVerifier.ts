/**
 * What a fire's bearer token came to. `valid`: every token check passed and its `jti` is now
 * remembered as used, in the store; `release` forgets it again, for a fire that was answered
 * without doing anything (503), so that the portal may retry with the same token (it never
 * throws: a memory that cannot be forgotten is logged). `invalid`: refused, for the reason given
 * (for the log only: it never goes back to the caller, and never holds the token); with
 * `retryAfterSeconds` the token could not be checked because the store of used tokens cannot be
 * used, and the portal should send it again after that long.
 */
export type FireTokenVerdict = { valid: true; release(): Promise<void> } | { valid: false; reason: string; retryAfterSeconds?: number };

/** Checks the bearer token of `POST /api/cron/fire` (docs/managed-trigger.md, The token checks). */
export interface FireTokenVerifier {
  /**
   * Checks `token` against the fire's `jobId` and `fireAt` (the body's): signature by a key of
   * the configured JWKS, with an asymmetric algorithm, audience, issuer, purpose, lifetime, the
   * job binding, the slot binding of a token with a `fire_at` claim, and replay. With `jobId` null
   * (a body without one) every check but the bindings is made and the `jti` is not used up.
   * Never throws.
   */
  verify(token: string, jobId: string | null, fireAt: string | null): Promise<FireTokenVerdict>;
}
