import { PostgresChatStore } from '../../../src/adapters/postgres/PostgresChatStore.js';
import { PostgresDatabase, databaseLocation } from '../../../src/adapters/postgres/PostgresDatabase.js';
import { ANSWERED_IDS_REMEMBERED, type ConversationKey, type InboundMessage } from '../../../src/domain/chat/inboundMessage.js';
import { scratchDatabaseForSuite } from '../../support/postgres.js';

const GROUP: ConversationKey = { platform: 'telegram', chatId: '-100777', threadId: '42' };

function aMessage(id: string, text = `question ${id}`): InboundMessage {
  return { conversation: GROUP, userId: '999', userName: 'Ada', messageId: id, text };
}

describe('chat state on PostgreSQL shared by two gateways', () => {
  const suite = scratchDatabaseForSuite();
  let replicas: [PostgresChatStore, PostgresChatStore];
  let secondPool: PostgresDatabase;

  beforeAll(async () => {
    // The second replica has a connection pool of its own, as another process would.
    secondPool = await PostgresDatabase.open(databaseLocation(suite.url, 'the test URL'));
    replicas = [new PostgresChatStore(suite.database), new PostgresChatStore(secondPool)];
  });

  afterAll(async () => {
    await secondPool.close();
  });

  beforeEach(async () => {
    await suite.database.query('TRUNCATE agent_chat_messages, agent_chat_conversations, agent_chat_cursors');
  });

  it('keeps a message both replicas hand over at the same moment once', async () => {
    const ids = Array.from({ length: 20 }, (_, n) => String(n + 1));

    const accepted = await Promise.all(ids.flatMap((id) => replicas.map((replica) => replica.accept(aMessage(id)))));

    expect(accepted.filter(Boolean)).toHaveLength(ids.length);
    expect((await replicas[1].pending()).map((message) => message.messageId).sort()).toEqual([...ids].sort());
  });

  it('loses no exchange when both replicas finish turns of one conversation at the same moment, and keeps whole exchanges', async () => {
    const ids = Array.from({ length: 12 }, (_, n) => String(n + 1));
    for (const id of ids) await replicas[0].accept(aMessage(id));

    await Promise.all(ids.map((id, n) => replicas[n % 2]!.finish(aMessage(id), `answer ${id}`, 100)));
    const all = await replicas[0].history(GROUP, 100);
    expect(all).toHaveLength(2 * ids.length);
    expect(
      all
        .filter((turn) => turn.role === 'user')
        .map((turn) => turn.content)
        .sort(),
    ).toEqual(ids.map((id) => `question ${id}`).sort());

    const more = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const id of more) await replicas[1].accept(aMessage(id));
    await Promise.all(more.map((id, n) => replicas[n % 2]!.finish(aMessage(id), `answer ${id}`, 3)));
    const kept = await replicas[1].history(GROUP, 100);
    expect(kept).toHaveLength(6);
    for (let place = 0; place < kept.length; place += 2) {
      const id = kept[place]!.content.replace('question ', '');
      expect(more).toContain(id);
      expect(kept[place]).toEqual({ role: 'user', content: `question ${id}` });
      expect(kept[place + 1]).toEqual({ role: 'assistant', content: `answer ${id}` });
    }
    expect(await replicas[0].pending()).toEqual([]);
  });

  it('stores text a column cannot hold (a NUL, half an emoji) with U+FFFD in its place instead of failing', async () => {
    const [store] = replicas;
    const cut = '🌍'.slice(0, 1);
    const message = aMessage('1', `nul\u0000 and ${cut} cut`);

    expect(await store.accept(message)).toBe(true);
    expect(await store.pending()).toEqual([{ ...message, text: 'nul\uFFFD and \uFFFD cut' }]);

    await store.finish(message, `answer ${cut}\u0000`, 10);
    expect(await store.history(GROUP, 10)).toEqual([
      { role: 'user', content: 'nul\uFFFD and \uFFFD cut' },
      { role: 'assistant', content: 'answer \uFFFD\uFFFD' },
    ]);

    await store.set('discord', `session\u0000${cut}`);
    expect(await store.get('discord')).toBe('session\uFFFD\uFFFD');
  });

  it("remembers a conversation's last answered message ids, not every one it ever answered", async () => {
    const [store] = replicas;
    const count = ANSWERED_IDS_REMEMBERED + 5;
    for (let n = 1; n <= count; n += 1) {
      await store.accept(aMessage(String(n)));
      await store.finish(aMessage(String(n)), null, 10);
    }

    const remembered = await suite.database.query<{ rows: string }>('SELECT count(*) AS rows FROM agent_chat_messages');
    expect(remembered).toEqual([{ rows: String(ANSWERED_IDS_REMEMBERED) }]);
    expect(await store.accept(aMessage(String(count)))).toBe(false);
    expect(await store.accept(aMessage(String(count - ANSWERED_IDS_REMEMBERED + 1)))).toBe(false);
    expect(await store.accept(aMessage('1'))).toBe(true);
  });
});
