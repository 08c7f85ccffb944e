import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import type { Logger } from '../ports/Logger.js';
import type { SignatureVerifier, SignedRequest } from '../ports/SignatureVerifier.js';
import { TOKENS } from '../ports/tokens.js';
import type { RateDecision, WebhookRateLimiter } from '../ports/WebhookRateLimiter.js';
import type { WebhookListenerSettings } from '../ports/WebhookSettings.js';

/**
 * Whether a request's sender is heard: `admitted`, refused (`refused_signature`, `rate_limited`),
 * or `limiter_failed` when the rate limiter could not answer (its database away), with why.
 */
export type Admission =
  | { kind: 'admitted' }
  | { kind: 'refused_signature' }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  | { kind: 'limiter_failed'; error: string };

/**
 * The first two steps of taking a webhook request (docs/webhooks.md): authentication under the
 * route's secrets, then the route's rate limit, `extra.rate_limit` requests a minute, which only
 * authenticated requests count. A refusal is logged here; what the request holds is AcceptWebhook's.
 */
@injectable()
export class WebhookAdmission {
  constructor(
    @inject(TOKENS.SignatureVerifier) private readonly verifier: SignatureVerifier,
    @inject(TOKENS.WebhookRateLimiter) private readonly rateLimiter: WebhookRateLimiter,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.WebhookListenerSettings) private readonly settings: WebhookListenerSettings,
  ) {}

  /** Whether the sender of `request` for `route` is heard at `now`. Never throws. */
  async admit(route: WebhookRoute, request: SignedRequest, now: Date): Promise<Admission> {
    if (route.secrets.kind === 'secrets') {
      const check = this.verifier.verify({ rawBody: request.rawBody, headers: request.headers }, route.secrets.values);
      if (!check.valid) {
        this.logger.warn('webhook refused: invalid signature', { route: route.name, scheme: check.scheme ?? 'none' });
        return { kind: 'refused_signature' };
      }
    }

    let allowance: RateDecision;
    try {
      allowance = await this.rateLimiter.take(route.name, this.settings.rateLimitPerMinute, now);
    } catch (error) {
      return { kind: 'limiter_failed', error: errorText(error) };
    }
    if (!allowance.allowed) {
      this.logger.warn('webhook refused: rate limit exceeded', { route: route.name, retry_after_seconds: allowance.retryAfterSeconds });
      return { kind: 'rate_limited', retryAfterSeconds: allowance.retryAfterSeconds };
    }
    return { kind: 'admitted' };
  }
}
