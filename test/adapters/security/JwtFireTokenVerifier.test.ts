import { createHash } from 'node:crypto';
import type { UsedFireTokens } from '../../../src/application/ports/UsedFireTokens.js';
import {
  FIRE_TOKEN_LEEWAY_SECONDS,
  JwtFireTokenVerifier,
  USED_TOKENS_KEPT_AFTER_EXPIRY_MS,
  USED_TOKENS_PRUNE_INTERVAL_MS,
} from '../../../src/adapters/security/JwtFireTokenVerifier.js';
import { InMemoryUsedFireTokens, SharedUsedFireTokens } from '../../support/fakes/InMemoryUsedFireTokens.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { FakePortal, nodeJwksFetcher } from '../../support/fakePortal.js';

const SLOT_A = '2030-01-01T01:00:00.000Z';
const SLOT_B = '2030-01-01T02:00:00.000Z';

describe('JwtFireTokenVerifier', () => {
  let portal: FakePortal;
  let clock: ManualClock;
  let log: RecordingLogger;
  let store: SharedUsedFireTokens;

  beforeAll(async () => {
    portal = await FakePortal.start();
  });
  afterAll(() => portal.close());
  beforeEach(() => {
    clock = new ManualClock(new Date());
    log = new RecordingLogger();
    store = new SharedUsedFireTokens();
  });

  /** A verifier on the shared store: one more gateway, or this one restarted. */
  const verifier = (used: UsedFireTokens = new InMemoryUsedFireTokens(store)) =>
    new JwtFireTokenVerifier(
      { jwksUrl: portal.jwksUrl, audience: portal.audience, issuer: portal.url },
      clock,
      log,
      used,
      nodeJwksFetcher(portal.jwksUrl),
    );

  describe('the fire_at claim', () => {
    it("takes a token whose fire_at is the body's slot, the same instant however written", async () => {
      const subject = verifier();
      expect(await subject.verify(portal.mint('job1', { claims: { fire_at: SLOT_A } }), 'job1', SLOT_A)).toMatchObject({ valid: true });
      expect(await subject.verify(portal.mint('job1', { claims: { fire_at: SLOT_A } }), 'job1', '2030-01-01T01:00:00Z')).toMatchObject({
        valid: true,
      });
    });

    it('refuses a token whose fire_at is another slot, or whose body names none', async () => {
      const subject = verifier();
      expect(await subject.verify(portal.mint('job1', { claims: { fire_at: SLOT_A } }), 'job1', SLOT_B)).toEqual({
        valid: false,
        reason: `it is bound to another slot (${SLOT_A})`,
      });
      expect(await subject.verify(portal.mint('job1', { claims: { fire_at: SLOT_A } }), 'job1', null)).toMatchObject({ valid: false });
    });

    it('refuses a token whose fire_at is not a time', async () => {
      for (const claim of ['tomorrow', 1893459600, null]) {
        expect(await verifier().verify(portal.mint('job1', { claims: { fire_at: claim } }), 'job1', SLOT_A)).toEqual({
          valid: false,
          reason: 'its fire_at claim is not a time',
        });
      }
    });

    it('takes a token without fire_at for any slot, once', async () => {
      const subject = verifier();
      const token = portal.mint('job1');
      expect(await subject.verify(token, 'job1', SLOT_B)).toMatchObject({ valid: true });
      expect(await subject.verify(token, 'job1', SLOT_A)).toEqual({ valid: false, reason: 'its jti was used already (a replay)' });
    });

    it('does not use up a token refused for its slot: sent with the right slot it is taken', async () => {
      const subject = verifier();
      const token = portal.mint('job1', { claims: { fire_at: SLOT_A } });
      expect(await subject.verify(token, 'job1', SLOT_B)).toMatchObject({ valid: false });
      expect(await subject.verify(token, 'job1', SLOT_A)).toMatchObject({ valid: true });
    });
  });

  describe('replay', () => {
    it('refuses a token used before, on this gateway, after a restart, or on another replica of the store', async () => {
      const token = portal.mint('job1');
      expect(await verifier().verify(token, 'job1', SLOT_A)).toMatchObject({ valid: true });

      expect(await verifier().verify(token, 'job1', SLOT_A)).toEqual({ valid: false, reason: 'its jti was used already (a replay)' });
    });

    it('remembers the sha256 of the jti until the token expires, leeway included', async () => {
      const used = new InMemoryUsedFireTokens(store);
      const token = portal.mint('job1', { claims: { jti: 'portal/jti:1' } });
      const exp = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp;

      await verifier(used).verify(token, 'job1', SLOT_A);

      expect(used.ids()).toEqual([createHash('sha256').update('portal/jti:1').digest('hex')]);
      expect(store.until.get(used.ids()[0]!)).toBe((exp + FIRE_TOKEN_LEEWAY_SECONDS) * 1000);
    });

    it('uses up no jti for a body without job_id', async () => {
      const token = portal.mint('job1');
      expect(await verifier().verify(token, null, SLOT_A)).toMatchObject({ valid: true });
      expect(await verifier().verify(token, 'job1', SLOT_A)).toMatchObject({ valid: true });
    });

    it('forgets the jti of a released token, for every gateway: the same token is taken again, once', async () => {
      const token = portal.mint('job1');
      const first = await verifier().verify(token, 'job1', SLOT_A);
      expect(first.valid).toBe(true);

      if (first.valid) await first.release();

      expect(await verifier().verify(token, 'job1', SLOT_A)).toMatchObject({ valid: true });
      expect(await verifier().verify(token, 'job1', SLOT_A)).toMatchObject({ valid: false });
    });

    it('forgets expired jtis in the store at most once a minute, keeping those expired less than the margin', async () => {
      const used = new InMemoryUsedFireTokens(store);
      const pruned: Date[] = [];
      const forgetExpired = used.forgetExpired.bind(used);
      used.forgetExpired = async (before) => {
        pruned.push(before);
        await forgetExpired(before);
      };
      const subject = verifier(used);

      await subject.verify(portal.mint('job1'), 'job1', SLOT_A);
      clock.advance(USED_TOKENS_PRUNE_INTERVAL_MS - 1);
      await subject.verify(portal.mint('job1'), 'job1', SLOT_A);
      clock.advance(1);
      await subject.verify(portal.mint('job1'), 'job1', SLOT_A);

      expect(pruned.map((before) => clock.now().getTime() - before.getTime())).toEqual([
        USED_TOKENS_PRUNE_INTERVAL_MS + USED_TOKENS_KEPT_AFTER_EXPIRY_MS,
        USED_TOKENS_KEPT_AFTER_EXPIRY_MS,
      ]);
    });
  });

  describe('a store that cannot be used', () => {
    const broken: UsedFireTokens = {
      remember: async () => {
        throw new Error('disk gone');
      },
      forget: async () => {
        throw new Error('disk gone');
      },
      forgetExpired: async () => {
        throw new Error('disk gone');
      },
    };

    it('refuses the token with a Retry-After, so that the portal sends it again', async () => {
      expect(await verifier(broken).verify(portal.mint('job1'), 'job1', SLOT_A)).toEqual({
        valid: false,
        reason: 'the fire tokens used before cannot be looked at: disk gone',
        retryAfterSeconds: 5,
      });
      expect(log.entries).toContainEqual(
        expect.objectContaining({ level: 'warn', message: expect.stringContaining('the expired fire tokens could not be forgotten') }),
      );
    });

    it('logs a release that cannot forget, and does not throw', async () => {
      const used = new InMemoryUsedFireTokens(store);
      const verdict = await verifier(used).verify(portal.mint('job1'), 'job1', SLOT_A);
      used.forget = broken.forget;

      if (verdict.valid) await verdict.release();

      expect(log.entries).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: expect.stringContaining("could not be forgotten, so the portal's retry with it will be refused"),
        }),
      );
    });
  });
});
