import { afterEach, describe, expect, it } from '@jest/globals';
import type { UsedFireTokens } from '../../src/application/ports/UsedFireTokens.js';

export interface UsedFireTokenStores {
  /** One more instance on the same, initially empty, store: a restarted gateway, or another replica. */
  another(): Promise<UsedFireTokens>;
  cleanup?(): Promise<void>;
}

const T0 = Date.parse('2030-01-01T01:00:00.000Z');
/** The instant `seconds` after T0. */
const at = (seconds: number) => new Date(T0 + seconds * 1000);

/**
 * What every UsedFireTokens promises (src/application/ports/UsedFireTokens.ts): an id is new
 * once until it expires or is forgotten, for every instance on the store, even when asked at the
 * same moment. Each test gets a fresh, empty store from `make`.
 */
export function describeUsedFireTokensContract(name: string, make: () => Promise<UsedFireTokenStores>): void {
  describe(`${name} (UsedFireTokens contract)`, () => {
    let stores: UsedFireTokenStores;
    let used: UsedFireTokens;

    const fresh = async () => {
      stores = await make();
      used = await stores.another();
    };

    afterEach(async () => {
      await stores?.cleanup?.();
    });

    it('says an id is new the first time only', async () => {
      await fresh();

      expect(await used.remember('jti-1', at(60), at(0))).toBe(true);
      expect(await used.remember('jti-1', at(60), at(1))).toBe(false);
      expect(await used.remember('jti-1', at(90), at(2))).toBe(false);
    });

    it('remembers ids apart', async () => {
      await fresh();

      expect(await used.remember('jti-1', at(60), at(0))).toBe(true);
      expect(await used.remember('jti-2', at(60), at(0))).toBe(true);
      expect(await used.remember('jti-1', at(60), at(0))).toBe(false);
      expect(await used.remember('jti-2', at(60), at(0))).toBe(false);
    });

    it('keeps the memory for another instance on the store: a restarted gateway, or another replica', async () => {
      await fresh();
      expect(await used.remember('jti-1', at(60), at(0))).toBe(true);

      const restarted = await stores.another();

      expect(await restarted.remember('jti-1', at(60), at(1))).toBe(false);
      expect(await restarted.remember('jti-2', at(60), at(1))).toBe(true);
      expect(await used.remember('jti-2', at(60), at(2))).toBe(false);
    });

    it('says new to exactly one of many asking for one id at the same moment, on several instances', async () => {
      await fresh();
      const instances = [used, await stores.another(), await stores.another()];

      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => instances[i % instances.length]!.remember('jti-1', at(60), at(0))),
      );

      expect(answers.filter((answer) => answer)).toHaveLength(1);
    });

    it('remembers an id until the instant given with it, and then takes it as new again', async () => {
      await fresh();
      expect(await used.remember('jti-1', at(60), at(0))).toBe(true);

      expect(await used.remember('jti-1', at(120), at(59))).toBe(false);
      expect(await used.remember('jti-1', at(120), at(60))).toBe(true);
      expect(await used.remember('jti-1', at(180), at(119))).toBe(false);
    });

    it('forgets an id for every instance: it is new again', async () => {
      await fresh();
      const other = await stores.another();
      expect(await used.remember('jti-1', at(60), at(0))).toBe(true);
      expect(await used.remember('jti-2', at(60), at(0))).toBe(true);

      await used.forget('jti-1');

      expect(await other.remember('jti-1', at(60), at(1))).toBe(true);
      expect(await other.remember('jti-2', at(60), at(1))).toBe(false);
      expect(await used.remember('jti-1', at(60), at(2))).toBe(false);
    });

    it('forgets an id it does not hold without complaint', async () => {
      await fresh();

      await used.forget('never-seen');
      await used.forget('never-seen');

      expect(await used.remember('never-seen', at(60), at(0))).toBe(true);
    });

    it('forgets the ids expired by a given instant and keeps the others', async () => {
      await fresh();
      expect(await used.remember('short', at(10), at(0))).toBe(true);
      expect(await used.remember('exact', at(20), at(0))).toBe(true);
      expect(await used.remember('long', at(30), at(0))).toBe(true);

      await used.forgetExpired(at(20));
      await used.forgetExpired(at(20));

      // Asked with a `now` before their expiry, only a forgotten id is new.
      expect(await used.remember('short', at(60), at(0))).toBe(true);
      expect(await used.remember('exact', at(60), at(0))).toBe(true);
      expect(await used.remember('long', at(60), at(0))).toBe(false);
    });
  });
}
