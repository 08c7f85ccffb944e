import type { WebhookHeaders } from '../../domain/webhook/webhookRequest.js';

/**
 * How a sender proved who it is; the first scheme whose header is present decides.
 * - `hub-signature-256`: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` (first code host)
 * - `token`: `X-Gitlab-Token` / `X-Hostb-Token` equal to the secret (second code host)
 * - `standard-webhooks`: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`
 * - `stripe`: `Stripe-Signature: t=<unix seconds>,v1=<hex>`
 * - `bearer`: `Authorization: Bearer <secret>`
 */
export type SignatureScheme = 'hub-signature-256' | 'token' | 'standard-webhooks' | 'stripe' | 'bearer';

/** A request as it arrived: the exact bytes of its body and its headers by lower-case name. */
export interface SignedRequest {
  rawBody: Uint8Array;
  headers: WebhookHeaders;
}

/** The verdict, and which scheme gave it (null when no scheme's header was present). */
export interface SignatureCheck {
  valid: boolean;
  scheme: SignatureScheme | null;
}

/** Checks that a webhook request was signed (or carries a token) with one of a route's secrets. */
export interface SignatureVerifier {
  /**
   * Whether the request proves knowledge of any one of `secrets` (rotation: old and new both
   * work) under the first scheme whose header is present. No such header, no secrets, a
   * malformed header or a timestamp more than 5 minutes from now: not valid. Comparisons take
   * the same time whatever the bytes; never throws, whatever the request holds.
   */
  verify(request: SignedRequest, secrets: readonly string[]): SignatureCheck;
}
