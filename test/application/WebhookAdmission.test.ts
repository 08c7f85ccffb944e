import { InMemoryWebhookRateLimiter } from '../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { WebhookAdmission } from '../../src/application/webhook/WebhookAdmission.js';
import { DEFAULT_WEBHOOK_LISTENER_SETTINGS } from '../../src/application/ports/WebhookSettings.js';
import { FakeSignatureVerifier } from '../support/fakes/FakeSignatureVerifier.js';
import { aRoute } from '../support/fakes/FakeWebhookRoutes.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const body = Buffer.from('{"action":"opened"}');
const signed = { rawBody: body, headers: { 'x-test-signature': 's3cret' } };

/** A rate limiter that counts what it is asked, and fails while `failing` says why. */
class CountingRateLimiter extends InMemoryWebhookRateLimiter {
  taken = 0;
  failing: string | null = null;

  override async take(route: string, limit: number, now: Date) {
    this.taken += 1;
    if (this.failing !== null) throw new Error(this.failing);
    return super.take(route, limit, now);
  }
}

function subject(rateLimitPerMinute = 30) {
  const verifier = new FakeSignatureVerifier();
  const limiter = new CountingRateLimiter();
  const logger = new RecordingLogger();
  const admission = new WebhookAdmission(verifier, limiter, logger, { ...DEFAULT_WEBHOOK_LISTENER_SETTINGS, rateLimitPerMinute });
  return { verifier, limiter, logger, admission };
}

describe('who a webhook route hears', () => {
  it('a sender that proves one of the secrets, within the rate limit', async () => {
    const s = subject();

    expect(await s.admission.admit(aRoute('ci'), signed, NOW)).toEqual({ kind: 'admitted' });
    expect(s.verifier.checks.map((check) => check.secrets)).toEqual([['s3cret']]);
  });

  it('not a sender that proves none, which is logged and not counted against the rate limit', async () => {
    const s = subject();

    const admission = await s.admission.admit(aRoute('ci'), { rawBody: body, headers: { 'x-test-signature': 'guess' } }, NOW);

    expect(admission).toEqual({ kind: 'refused_signature' });
    expect(s.limiter.taken).toBe(0);
    expect(s.logger.entries).toEqual([
      expect.objectContaining({ level: 'warn', message: 'webhook refused: invalid signature', fields: { route: 'ci', scheme: 'bearer' } }),
    ]);
  });

  it('anyone on a route without authentication, without asking the verifier', async () => {
    const s = subject();

    const admission = await s.admission.admit(
      aRoute('open', { secrets: { kind: 'insecure_no_auth' } }),
      { rawBody: body, headers: {} },
      NOW,
    );

    expect(admission).toEqual({ kind: 'admitted' });
    expect(s.verifier.checks).toEqual([]);
  });

  it('no more than the rate limit a minute, then says when to try again', async () => {
    const s = subject(2);

    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await s.admission.admit(aRoute('ci'), signed, NOW));

    expect(answers.slice(0, 2)).toEqual([{ kind: 'admitted' }, { kind: 'admitted' }]);
    expect(answers[2]).toEqual({ kind: 'rate_limited', retryAfterSeconds: expect.any(Number) });
    expect(s.logger.entries.at(-1)).toMatchObject({ level: 'warn', message: 'webhook refused: rate limit exceeded' });
  });

  it('says why when the rate limiter cannot answer, and leaves the logging to the caller', async () => {
    const s = subject();
    s.limiter.failing = 'Cannot use the database db:5432/agent: nothing listens there';

    expect(await s.admission.admit(aRoute('ci'), signed, NOW)).toEqual({
      kind: 'limiter_failed',
      error: 'Cannot use the database db:5432/agent: nothing listens there',
    });
    expect(s.logger.entries).toEqual([]);
  });
});
