import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileChatStore } from '../../../src/adapters/chat/FileChatStore.js';
import type { InboundMessage } from '../../../src/domain/chat/inboundMessage.js';

const message = (n: number): InboundMessage => ({
  conversation: { platform: 'slack', chatId: `D${n % 3}`, threadId: null },
  userId: 'U1',
  userName: null,
  messageId: `m${n}`,
  text: `message ${n}`,
});

describe('FileChatStore shared by two gateways on one home', () => {
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-chat-shared-'));
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('loses no message one keeps while the other answers others, at the same moments', async () => {
    const keeping = new FileChatStore(home);
    const answering = new FileChatStore(home);
    for (let n = 0; n < 10; n += 1) await answering.accept(message(n));

    // One gateway keeps ten new messages while the other answers the first ten.
    await Promise.all([
      ...Array.from({ length: 10 }, (_, n) => keeping.accept(message(10 + n))),
      ...Array.from({ length: 10 }, (_, n) => answering.finish(message(n), `answer ${n}`, 20)),
    ]);

    expect((await keeping.pending()).map((each) => each.messageId).sort()).toEqual(
      Array.from({ length: 10 }, (_, n) => `m${10 + n}`).sort(),
    );
    expect(await answering.accept(message(3))).toBe(false);
  });
});
