import { PlatformDelivery } from '../../src/application/delivery/PlatformDelivery.js';
import { DeliveryError } from '../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError } from '../../src/application/ports/PlatformSender.js';
import { ConfiguredPlatforms } from '../../src/adapters/delivery/ConfiguredPlatforms.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../src/domain/DeliveryTarget.js';
import { InMemoryChannelDirectory } from '../support/fakes/InMemoryChannelDirectory.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingTimer } from '../support/fakes/RecordingTimer.js';
import { SequentialIds } from '../support/fakes/SequentialIds.js';
import type { FakePlatformServer } from '../support/platforms/FakePlatformServer.js';
import { eventually } from '../support/processLiveness.js';

/** The delivery path over one real platform adapter, pointed at `fake`. */
export function deliveryOver(fake: FakePlatformServer, extraSettings: Record<string, string> = {}) {
  const platforms = new ConfiguredPlatforms({ [fake.platform]: { ...fake.settings, ...extraSettings } }, {});
  const timer = new RecordingTimer();
  const log = new RecordingLogger();
  const delivery = new PlatformDelivery(platforms, new InMemoryChannelDirectory(), timer, new SequentialIds(), log);
  const [target] = parseDeliveryTargets(fake.target) as [PlatformTarget];
  return { platforms, timer, log, delivery, target };
}

/** Paragraphs of numbered words, about `length` characters, so that parts can be told apart. */
export function longAnswer(length: number): string {
  const paragraphs: string[] = [];
  let total = 0;
  for (let n = 1; total < length; n += 1) {
    const paragraph = Array.from({ length: 12 }, (_, word) => `word${n}-${word}`).join(' ');
    paragraphs.push(paragraph);
    total += paragraph.length + 2;
  }
  return paragraphs.join('\n\n');
}

/**
 * What every platform adapter promises through the one delivery path: a confirmed message
 * counts, long answers are split at the platform's limit, 429s wait the platform's hint, 5xx and
 * silence are retried three times at most, other refusals fail at once with the platform's own
 * words, and a part that keeps failing stops the delivery without re-sending what got through.
 */
export function describePlatformSenderContract(name: string, startFake: () => Promise<FakePlatformServer>): void {
  describe(`${name} (platform sender contract)`, () => {
    let fake: FakePlatformServer;
    beforeEach(async () => {
      fake = await startFake();
    });
    afterEach(async () => {
      await fake.close();
    });

    const limitOf = async (harness: ReturnType<typeof deliveryOver>) => (await harness.platforms.sender(fake.platform)).partLimit;

    it('counts a delivery once the platform confirmed it', async () => {
      const { delivery, target, timer } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'The build is green.');
      expect(receipt.messageIds).toHaveLength(1);
      expect(receipt.messageIds[0]).not.toBe('');
      expect(fake.delivered).toEqual(['The build is green.']);
      expect(timer.waits).toEqual([]);
    });

    it('delivers to the home channel when the target names none', async () => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver({ kind: 'platform', platform: fake.platform, destination: null, threadId: null }, 'home');
      expect(fake.delivered).toEqual(['home']);
    });

    it('splits a long answer into numbered parts within the platform limit, in order', async () => {
      const harness = deliveryOver(fake);
      const limit = await limitOf(harness);
      if (limit === null) return expect(fake.delivered).toEqual([]); // no limit: nothing to split
      const text = longAnswer(Math.floor(limit * 2.5));
      const receipt = await harness.delivery.deliver(harness.target, text);
      const count = fake.delivered.length;
      expect(count).toBeGreaterThanOrEqual(3);
      expect(receipt.messageIds).toHaveLength(count);
      fake.delivered.forEach((part, index) => {
        expect(part.length).toBeLessThanOrEqual(limit);
        expect(part.endsWith(` (${index + 1}/${count})`)).toBe(true);
      });
      const words = fake.delivered.join(' ').match(/word\d+-\d+/g);
      expect(words).toEqual(text.match(/word\d+-\d+/g));
    });

    it("waits the platform's retry hint after a 429 and then delivers once", async () => {
      fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 7 });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'after the storm');
      expect(fake.delivered).toEqual(['after the storm']);
      expect(fake.attempts).toBe(2);
      expect(timer.waits).toHaveLength(1);
      if (fake.rateLimitHint) expect(timer.waits).toEqual([7000]);
    });

    it('backs off 1 s and 2 s on server errors and delivers on the third attempt', async () => {
      fake.failNext({ failure: 'unavailable', times: 2 });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'third time lucky');
      expect(fake.delivered).toEqual(['third time lucky']);
      expect(timer.waits).toEqual([1000, 2000]);
    });

    it('gives up after three attempts when the server keeps failing', async () => {
      fake.failNext({ failure: 'unavailable', times: Infinity });
      const { delivery, target } = deliveryOver(fake);
      const error = await delivery.deliver(target, 'never').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toMatch(/after 3 attempts/);
      expect((error as Error).message).toContain(fake.platform);
      expect(fake.attempts).toBe(3);
      expect(fake.delivered).toEqual([]);
    });

    it("fails at once, in the platform's words, on a permanent refusal", async () => {
      fake.failNext({ failure: 'refused' });
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await delivery.deliver(target, 'nope').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as Error).message).toContain(fake.platform);
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('names the platform and the credential to check when the platform refuses it', async () => {
      fake.failNext({ failure: 'unauthorized' });
      const { delivery, target } = deliveryOver(fake);
      const error = await delivery.deliver(target, 'who am I').catch((caught: unknown) => caught);
      expect((error as Error).message).toMatch(
        new RegExp(`${fake.platform} refused the credentials.*check platforms\\.${fake.platform}\\.`),
      );
      expect(fake.attempts).toBe(1);
      for (const secret of Object.entries(fake.settings)
        .filter(([key]) => /token|secret|password/.test(key))
        .map(([, value]) => value)) {
        expect((error as Error).message).not.toContain(secret);
      }
    });

    it('names the account of good credentials and refuses wrong ones, where the platform has a "who am I" call', async () => {
      const sender = await deliveryOver(fake).platforms.sender(fake.platform);
      if (sender.whoAmI === undefined) return;
      const who = await sender.whoAmI();
      // No such call for these settings (a DingTalk robot webhook).
      if (who === null) return;
      expect(who).not.toBe('');
      const secretKeys = Object.keys(fake.settings).filter((key) => /token|secret|password/.test(key));
      const wrong = fake.wrongCredentials ?? Object.fromEntries(secretKeys.map((key) => [key, `wrong-${key}-0000`]));
      const refusing = await deliveryOver(fake, wrong).platforms.sender(fake.platform);
      const error = await refusing.whoAmI!().catch((caught: unknown) => caught);
      expect((error as Error).message).toMatch(
        new RegExp(`${fake.platform} refused the credentials.*check platforms\\.${fake.platform}\\.`),
      );
      expect(fake.delivered).toEqual([]);
    });

    it('speaks of the credentials check, never of a message, when the "who am I" call fails without refusing the credentials', async () => {
      const sender = await deliveryOver(fake).platforms.sender(fake.platform);
      if (sender.whoAmI === undefined || fake.answerNextWhoAmI === undefined) return;
      for (const oddity of ['refused', 'anonymous'] as const) {
        if (!fake.answerNextWhoAmI(oddity)) continue;
        const error = await sender.whoAmI().catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(PlatformSendError);
        expect((error as PlatformSendError).kind).toBe('refused');
        expect((error as Error).message).toContain(fake.platform);
        expect((error as Error).message).not.toMatch(/message|notify/i);
      }
      expect(fake.delivered).toEqual([]);
    });

    it('counts a platform that never answers as a failed attempt', async () => {
      fake.failNext({ failure: 'silent', times: Infinity });
      const { delivery, target } = deliveryOver(fake, { timeout_seconds: '0.5' });
      const error = await delivery.deliver(target, 'hello?').catch((caught: unknown) => caught);
      expect((error as Error).message).toMatch(/did not answer within 0\.5 s.*after 3 attempts/);
      // The last request may reach the fake after the sender gave up on it: the timers of a
      // process held up by a busy machine fire before it reads what arrived meanwhile.
      expect(await eventually(() => fake.attempts === 3, 5_000)).toBe(true);
    });

    it('stops at a middle part that keeps failing and never re-sends a delivered part', async () => {
      const harness = deliveryOver(fake);
      const limit = await limitOf(harness);
      if (limit === null) return expect(fake.delivered).toEqual([]);
      fake.failNext({ failure: 'unavailable', times: Infinity, when: (text) => text.endsWith('(2/3)') });
      const text = longAnswer(Math.floor(limit * 2.5));
      const error = await harness.delivery.deliver(harness.target, text).catch((caught: unknown) => caught);
      expect((error as Error).message).toMatch(/^1 of 3 parts delivered/);
      expect(fake.delivered).toHaveLength(1);
      expect(fake.delivered[0]).toMatch(/\(1\/3\)$/);
      expect(fake.attempts).toBe(4);
    });
  });
}
