import { PermitPool } from '../../src/domain/PermitPool.js';

describe('PermitPool', () => {
  it('gives at most its limit at once and hands a given-back permit to the oldest waiter', async () => {
    const pool = new PermitPool(2);
    const first = await pool.acquire();
    await pool.acquire();
    const order: number[] = [];
    const waiting = [3, 4, 5].map((n) => pool.acquire().then((release) => (order.push(n), release)));
    expect(pool.inUse).toBe(2);
    expect(pool.waiting).toBe(3);
    first();
    first(); // a second call gives back nothing more
    const third = await waiting[0]!;
    expect(order).toEqual([3]);
    expect(pool.waiting).toBe(2);
    third();
    await waiting[1];
    expect(order).toEqual([3, 4]);
    expect(pool.inUse).toBe(2);
  });

  it('lets a waiter whose signal fires leave at once, and skips it when its turn comes', async () => {
    const pool = new PermitPool(1);
    const held = pool.tryAcquire()!;
    const cancelled = new AbortController();
    const leaving = pool.acquire(cancelled.signal);
    const staying = pool.acquire();
    cancelled.abort(new Error('cancelled'));
    await expect(leaving).rejects.toThrow('cancelled');
    expect(pool.waiting).toBe(1);
    held();
    const next = await staying;
    expect(pool.inUse).toBe(1);
    next();
    expect(pool.inUse).toBe(0);
    expect(pool.tryAcquire()).not.toBeNull();
  });

  it('refuses a waiter whose signal fired before it asked, and never lets one jump the queue', async () => {
    const pool = new PermitPool(1);
    await expect(pool.acquire(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    const held = pool.tryAcquire()!;
    const waiter = pool.acquire();
    held();
    // The permit went to the waiter: a newcomer gets none.
    expect(pool.tryAcquire()).toBeNull();
    (await waiter)();
  });

  it('holds thousands without a limit, and refuses a limit below 1', () => {
    const pool = new PermitPool(Infinity);
    for (let i = 0; i < 5000; i += 1) expect(pool.tryAcquire()).not.toBeNull();
    expect(pool.inUse).toBe(5000);
    expect(() => new PermitPool(0)).toThrow('a permit pool needs a limit of 1 or more (got 0)');
  });
});
