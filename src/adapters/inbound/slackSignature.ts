import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far Slack's request timestamp may be from now, either way, before the request is refused as stale. */
export const SLACK_SIGNATURE_WINDOW_SECONDS = 5 * 60;

/** Why a request's signature was not accepted; null when it was. */
export type SlackSignatureProblem = 'missing' | 'stale' | 'wrong';

/**
 * Checks Slack's request signature (https://api.slack.com/authentication/verifying-requests-from-slack):
 * `X-Slack-Signature` is `v0=` and the hex HMAC-SHA256, keyed with the app's signing secret, of
 * `v0:<X-Slack-Request-Timestamp>:<raw body>`; the timestamp (Unix seconds) must lie within five
 * minutes of `nowMs`, so that a captured request cannot be replayed later. The comparison takes
 * the same time whichever byte differs.
 */
export function slackSignatureProblem(
  signingSecret: string,
  timestampHeader: string | undefined,
  signatureHeader: string | undefined,
  rawBody: Buffer,
  nowMs: number,
): SlackSignatureProblem | null {
  if (timestampHeader === undefined || signatureHeader === undefined) return 'missing';
  if (!/^\d{1,12}$/.test(timestampHeader.trim())) return 'missing';
  const timestamp = Number(timestampHeader.trim());
  if (Math.abs(nowMs / 1000 - timestamp) > SLACK_SIGNATURE_WINDOW_SECONDS) return 'stale';
  const expected = Buffer.from(slackSignature(signingSecret, timestampHeader.trim(), rawBody), 'utf8');
  const sent = Buffer.from(signatureHeader.trim(), 'utf8');
  return sent.length === expected.length && timingSafeEqual(sent, expected) ? null : 'wrong';
}

/** `v0=<hex>`: the signature Slack sends with a request made at `timestamp` carrying `rawBody`. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: Buffer | string): string {
  const hmac = createHmac('sha256', signingSecret);
  hmac.update(`v0:${timestamp}:`, 'utf8');
  hmac.update(rawBody);
  return `v0=${hmac.digest('hex')}`;
}
