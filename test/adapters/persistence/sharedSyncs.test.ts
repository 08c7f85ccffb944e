import { SharedSyncs } from '../../../src/adapters/persistence/sharedSyncs.js';

/** A sync that finishes when told to, noting when it started. */
function controlledSyncs() {
  const started: Array<{ finish: () => void; fail: (error: Error) => void }> = [];
  const sync = () =>
    new Promise<void>((resolve, reject) => {
      started.push({ finish: resolve, fail: reject });
    });
  return { started, sync };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('shared syncs of a directory', () => {
  it('gives writers who arrive while a sync runs one sync that starts after it, together', async () => {
    const syncs = new SharedSyncs();
    const { started, sync } = controlledSyncs();
    const finished: number[] = [];

    const first = syncs.sync('/home/runs', sync).then(() => finished.push(0));
    const later = [1, 2, 3, 4, 5].map((n) => syncs.sync('/home/runs', sync).then(() => finished.push(n)));
    await settled();
    expect(started).toHaveLength(1);

    // The sync under way may have begun before their writes: it does not count for them.
    started[0]!.finish();
    await first;
    await settled();
    expect(finished).toEqual([0]);
    expect(started).toHaveLength(2);

    started[1]!.finish();
    await Promise.all(later);
    expect(finished.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(started).toHaveLength(2);
  });

  it('syncs another directory without waiting, and starts afresh once nothing runs', async () => {
    const syncs = new SharedSyncs();
    const { started, sync } = controlledSyncs();

    const one = syncs.sync('/home/a', sync);
    const other = syncs.sync('/home/b', sync);
    expect(started).toHaveLength(2);
    started[0]!.finish();
    started[1]!.finish();
    await Promise.all([one, other]);

    const again = syncs.sync('/home/a', sync);
    expect(started).toHaveLength(3);
    started[2]!.finish();
    await again;
  });

  it('tells every writer sharing a sync that it failed, and the next writers get a sync of their own', async () => {
    const syncs = new SharedSyncs();
    const { started, sync } = controlledSyncs();

    const first = syncs.sync('/home/runs', sync);
    const shared = [syncs.sync('/home/runs', sync), syncs.sync('/home/runs', sync)];
    started[0]!.fail(new Error('EIO'));
    await expect(first).rejects.toThrow('EIO');
    await settled();
    started[1]!.fail(new Error('ENOSPC'));
    for (const each of shared) await expect(each).rejects.toThrow('ENOSPC');

    const next = syncs.sync('/home/runs', sync);
    expect(started).toHaveLength(3);
    started[2]!.finish();
    await next;
  });
});
