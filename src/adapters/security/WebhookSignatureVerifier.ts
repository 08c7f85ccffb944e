import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { inject, injectable } from 'inversify';
import type { Clock } from '../../application/ports/Clock.js';
import type { SignatureCheck, SignatureScheme, SignatureVerifier, SignedRequest } from '../../application/ports/SignatureVerifier.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { headerValue, type WebhookHeaders } from '../../domain/webhook/webhookRequest.js';

/** How far a signed timestamp may be from now, either way (Standard Webhooks and Stripe). */
export const SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000;

const HUB_SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
const BEARER = /^Bearer +(\S.*)$/i;
const UNIX_SECONDS = /^[0-9]{1,12}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const SHA256_BYTES = 32;

type Check = (request: SignedRequest, secrets: readonly string[]) => boolean;

/**
 * Webhook authentication on the raw body bytes (docs/webhooks.md): the first scheme whose header is
 * present decides — `X-Hub-Signature-256`, `X-Gitlab-Token` / `X-Hostb-Token`, Standard
 * Webhooks (`webhook-signature`), `Stripe-Signature`, `Authorization: Bearer`. Every secret of
 * the list is tried, and every comparison is `timingSafeEqual` over equal-length buffers (tokens
 * are compared as SHA-256 digests, so their length does not show either).
 *
 * Header values reach Node as Latin-1 text; they are turned back into the bytes that were sent
 * before comparing with a secret, which is UTF-8.
 */
@injectable()
export class WebhookSignatureVerifier implements SignatureVerifier {
  private readonly schemes: ReadonlyArray<[SignatureScheme, (headers: WebhookHeaders) => boolean, Check]> = [
    ['hub-signature-256', (headers) => has(headers, 'x-hub-signature-256'), (request, secrets) => this.hubSignature(request, secrets)],
    [
      'token',
      (headers) => has(headers, 'x-gitlab-token') || has(headers, 'x-hostb-token'),
      (request, secrets) => this.token(request, secrets),
    ],
    ['standard-webhooks', (headers) => has(headers, 'webhook-signature'), (request, secrets) => this.standardWebhooks(request, secrets)],
    ['stripe', (headers) => has(headers, 'stripe-signature'), (request, secrets) => this.stripe(request, secrets)],
    ['bearer', (headers) => has(headers, 'authorization'), (request, secrets) => this.bearer(request, secrets)],
  ];

  constructor(@inject(TOKENS.Clock) private readonly clock: Clock) {}

  verify(request: SignedRequest, secrets: readonly string[]): SignatureCheck {
    const found = this.schemes.find(([, present]) => present(request.headers));
    if (!found) return { valid: false, scheme: null };
    const [scheme, , check] = found;
    if (secrets.length === 0) return { valid: false, scheme };
    try {
      return { valid: check(request, secrets), scheme };
    } catch {
      // Nothing above should throw; whatever a request holds, it is a failed check, not a crash.
      return { valid: false, scheme };
    }
  }

  private hubSignature({ rawBody, headers }: SignedRequest, secrets: readonly string[]): boolean {
    const match = HUB_SIGNATURE.exec(headerValue(headers, 'x-hub-signature-256') ?? '');
    if (!match) return false;
    const sent = Buffer.from(match[1]!, 'hex');
    return anyOf(secrets, (secret) => sameBytes(hmac(utf8(secret), [rawBody]), sent));
  }

  private token({ headers }: SignedRequest, secrets: readonly string[]): boolean {
    const sent = headerValue(headers, 'x-gitlab-token') ?? headerValue(headers, 'x-hostb-token');
    if (sent === null) return false;
    return sameSecret(sent, secrets);
  }

  private bearer({ headers }: SignedRequest, secrets: readonly string[]): boolean {
    const match = BEARER.exec(headerValue(headers, 'authorization') ?? '');
    if (!match) return false;
    return sameSecret(match[1]!, secrets);
  }

  /**
   * https://www.standardwebhooks.com: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`,
   * base64, sent as space-separated `v1,<signature>` entries. The key is the base64 after
   * `whsec_`, or the secret's own bytes when it has no such prefix.
   */
  private standardWebhooks({ rawBody, headers }: SignedRequest, secrets: readonly string[]): boolean {
    const id = headerValue(headers, 'webhook-id');
    const timestamp = headerValue(headers, 'webhook-timestamp');
    const signatures = (headerValue(headers, 'webhook-signature') ?? '')
      .split(' ')
      .filter((entry) => entry.startsWith('v1,'))
      .map((entry) => Buffer.from(entry.slice(3), 'base64'))
      .filter((signature) => signature.length === SHA256_BYTES);
    if (id === null || timestamp === null || signatures.length === 0 || !this.isFresh(timestamp)) return false;
    const signed = [Buffer.from(`${id}.${timestamp}.`, 'latin1'), rawBody];
    return anyOf(secrets, (secret) => {
      const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : utf8(secret);
      const expected = hmac(key, signed);
      return anyOf(signatures, (signature) => sameBytes(expected, signature));
    });
  }

  /**
   * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=…][,v0=…]`, HMAC-SHA256 of
   * `<t>.<body>` keyed with the whole secret (`whsec_…` included). Schemes other than v1 are
   * ignored, as Stripe asks, so that a weaker one cannot stand in.
   */
  private stripe({ rawBody, headers }: SignedRequest, secrets: readonly string[]): boolean {
    const fields = (headerValue(headers, 'stripe-signature') ?? '').split(',').map((item) => {
      const at = item.indexOf('=');
      return at < 0 ? ['', ''] : [item.slice(0, at).trim(), item.slice(at + 1).trim()];
    });
    const timestamp = fields.find(([name]) => name === 't')?.[1];
    const signatures = fields
      .filter(([name, value]) => name === 'v1' && HEX_SHA256.test(value!))
      .map(([, value]) => Buffer.from(value!, 'hex'));
    if (timestamp === undefined || signatures.length === 0 || !this.isFresh(timestamp)) return false;
    const signed = [Buffer.from(`${timestamp}.`, 'latin1'), rawBody];
    return anyOf(secrets, (secret) => {
      const expected = hmac(utf8(secret), signed);
      return anyOf(signatures, (signature) => sameBytes(expected, signature));
    });
  }

  private isFresh(unixSeconds: string): boolean {
    if (!UNIX_SECONDS.test(unixSeconds)) return false;
    return Math.abs(this.clock.now().getTime() - Number(unixSeconds) * 1000) <= SIGNATURE_TOLERANCE_MS;
  }
}

function has(headers: WebhookHeaders, name: string): boolean {
  return headerValue(headers, name) !== null;
}

function utf8(text: string): Buffer {
  return Buffer.from(text, 'utf8');
}

function hmac(key: Uint8Array, parts: readonly Uint8Array[]): Buffer {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

function sha256(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/** A token (a header value, so Latin-1 text of the bytes sent) against each secret, as digests. */
function sameSecret(sent: string, secrets: readonly string[]): boolean {
  const sentDigest = sha256(Buffer.from(sent, 'latin1'));
  return anyOf(secrets, (secret) => sameBytes(sha256(utf8(secret)), sentDigest));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Like `some`, but tries every item, so how long it takes does not tell which one matched. */
function anyOf<T>(items: readonly T[], matches: (item: T) => boolean): boolean {
  let found = false;
  for (const item of items) {
    if (matches(item)) found = true;
  }
  return found;
}
