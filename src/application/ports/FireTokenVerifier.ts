/**
 * What a fire's bearer token came to. `valid`: every token check passed and its `jti`
 * is now remembered as used; `release` forgets it again, for a fire that was answered without
 * doing anything (503), so that the portal may retry with the same token. `invalid`: refused, for
 * the reason given (for the log only: it never goes back to the caller, and never holds the token).
 */
export type FireTokenVerdict = { valid: true; release(): void } | { valid: false; reason: string };

/** Checks the bearer token of `POST /api/cron/fire` (docs/managed-trigger.md, The token checks). */
export interface FireTokenVerifier {
  /**
   * Checks `token` against the fire's `jobId`: signature by a key of the configured JWKS, with an
   * asymmetric algorithm, audience, issuer, purpose, lifetime and replay. With `jobId` null (a body
   * without one) every check but the job binding is made and the `jti` is not used up. Never throws.
   */
  verify(token: string, jobId: string | null): Promise<FireTokenVerdict>;
}
