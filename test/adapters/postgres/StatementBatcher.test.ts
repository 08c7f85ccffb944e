import { StatementBatcher } from '../../../src/adapters/postgres/StatementBatcher.js';

/** A statement sender the test answers by hand: each call is one statement. */
function heldStatements() {
  const sent: Array<{ items: readonly number[]; answer: () => void; fail: (error: Error) => void }> = [];
  const send = (items: readonly number[]) =>
    new Promise<readonly string[]>((resolve, reject) => {
      sent.push({ items, answer: () => resolve(items.map((item) => `out ${item}`)), fail: reject });
    });
  return { sent, send };
}

const settle = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('statements shared by requests made at the same time (StatementBatcher)', () => {
  it('sends a request made while none is under way at once, alone', async () => {
    const { sent, send } = heldStatements();
    const batcher = new StatementBatcher(send);

    const output = batcher.submit(1);
    expect(sent.map((statement) => statement.items)).toEqual([[1]]);
    sent[0]!.answer();
    expect(await output).toBe('out 1');
  });

  it('sends the requests made while a statement is under way together when it ends, each given its own output', async () => {
    const { sent, send } = heldStatements();
    const batcher = new StatementBatcher(send);

    const outputs = [1, 2, 3, 4].map((item) => batcher.submit(item));
    expect(sent.map((statement) => statement.items)).toEqual([[1]]);
    sent[0]!.answer();
    await settle();
    expect(sent.map((statement) => statement.items)).toEqual([[1], [2, 3, 4]]);
    sent[1]!.answer();

    expect(await Promise.all(outputs)).toEqual(['out 1', 'out 2', 'out 3', 'out 4']);
  });

  it('puts at most maxBatch requests in one statement', async () => {
    const { sent, send } = heldStatements();
    const batcher = new StatementBatcher(send, 2);

    const outputs = [1, 2, 3, 4, 5].map((item) => batcher.submit(item));
    for (let statement = 0; statement < 3; statement += 1) {
      await settle();
      sent[statement]!.answer();
    }

    await Promise.all(outputs);
    expect(sent.map((statement) => statement.items)).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('rejects every request of a statement that failed, and sends the next ones all the same', async () => {
    const { sent, send } = heldStatements();
    const batcher = new StatementBatcher(send);
    const first = batcher.submit(1);
    const failing = [batcher.submit(2), batcher.submit(3)];
    sent[0]!.answer();
    await settle();

    const failure = new Error('the database went away');
    const ends = Promise.allSettled(failing);
    sent[1]!.fail(failure);
    await expect(first).resolves.toBe('out 1');
    expect(await ends).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);

    const after = batcher.submit(4);
    expect(sent.map((statement) => statement.items)).toEqual([[1], [2, 3], [4]]);
    sent[2]!.answer();
    expect(await after).toBe('out 4');
  });
});
