import type { ConversationStore } from '../../src/application/ports/ConversationStore.js';
import type { InboundCursorStore } from '../../src/application/ports/InboundChat.js';
import type { ConversationKey, InboundMessage } from '../../src/domain/chat/inboundMessage.js';

export interface ConversationStoreSubject {
  store: ConversationStore;
  /** Another store on the same storage (the gateway after a restart, or another replica). */
  another(): Promise<ConversationStore>;
  cleanup?: () => Promise<void>;
}

export interface InboundCursorStoreSubject {
  cursors: InboundCursorStore;
  /** Another store on the same storage (the gateway after a restart). */
  another(): Promise<InboundCursorStore>;
  cleanup?: () => Promise<void>;
}

const DIRECT: ConversationKey = { platform: 'telegram', chatId: '12345', threadId: null };
const TOPIC: ConversationKey = { platform: 'telegram', chatId: '-100777', threadId: '42' };

/** Message `id` in `conversation` (a private Telegram chat unless told), its text naming it. */
function aMessage(id: string, conversation: ConversationKey = DIRECT, text = `question ${id}`): InboundMessage {
  return { conversation, userId: '999', userName: 'Ada', messageId: id, text };
}

const exchange = (question: string, answer: string) => [
  { role: 'user', content: question },
  { role: 'assistant', content: answer },
];

/** What every ConversationStore promises; each test gets a fresh, empty one. */
export function describeConversationStoreContract(name: string, makeSubject: () => Promise<ConversationStoreSubject>): void {
  describe(`${name} (ConversationStore contract)`, () => {
    let subject: ConversationStoreSubject | undefined;
    const use = async () => {
      subject = await makeSubject();
      return subject.store;
    };

    afterEach(async () => {
      await subject?.cleanup?.();
      subject = undefined;
    });

    it('owes nothing and remembers nothing when nothing was accepted', async () => {
      const store = await use();
      expect(await store.pending()).toEqual([]);
      expect(await store.history(DIRECT, 10)).toEqual([]);
    });

    it('keeps accepted messages field for field, pending in the order they were accepted, also after a restart', async () => {
      const store = await use();
      const first = aMessage('7', DIRECT, 'Wie spät ist es? ✓ 🌍\nzweite Zeile');
      const second = { ...aMessage('3', TOPIC), userName: null };
      const third = aMessage('5');

      expect(await store.accept(first)).toBe(true);
      expect(await store.accept(second)).toBe(true);
      expect(await store.accept(third)).toBe(true);

      expect(await store.pending()).toEqual([first, second, third]);
      expect(await (await subject!.another()).pending()).toEqual([first, second, third]);
    });

    it('accepts a message handed over twice once', async () => {
      const store = await use();
      expect(await store.accept(aMessage('7'))).toBe(true);

      expect(await store.accept(aMessage('7'))).toBe(false);
      expect(await (await subject!.another()).accept(aMessage('7'))).toBe(false);

      expect(await store.pending()).toEqual([aMessage('7')]);
    });

    it('accepts a message handed over several times at the same moment once', async () => {
      const store = await use();

      const accepted = await Promise.all([store.accept(aMessage('7')), store.accept(aMessage('7')), store.accept(aMessage('7'))]);

      expect(accepted.filter(Boolean)).toHaveLength(1);
      expect(await store.pending()).toEqual([aMessage('7')]);
    });

    it('owes a finished message no more, and does not accept it again, answered or failed', async () => {
      const store = await use();
      await store.accept(aMessage('1'));
      await store.accept(aMessage('2'));
      await store.accept(aMessage('3'));

      await store.finish(aMessage('1'), 'It is noon.', 10);
      await store.finish(aMessage('2'), null, 10);

      expect(await store.pending()).toEqual([aMessage('3')]);
      expect(await store.accept(aMessage('1'))).toBe(false);
      expect(await store.accept(aMessage('2'))).toBe(false);
      const restarted = await subject!.another();
      expect(await restarted.pending()).toEqual([aMessage('3')]);
      expect(await restarted.accept(aMessage('1'))).toBe(false);
    });

    it('adds an answered exchange to the history, oldest first, and nothing for a failed turn', async () => {
      const store = await use();
      for (const id of ['1', '2', '3']) await store.accept(aMessage(id));

      await store.finish(aMessage('1'), 'answer 1', 10);
      await store.finish(aMessage('2'), null, 10);
      await store.finish(aMessage('3'), 'answer 3 ✓ 🌍', 10);

      const both = [...exchange('question 1', 'answer 1'), ...exchange('question 3', 'answer 3 ✓ 🌍')];
      expect(await store.history(DIRECT, 10)).toEqual(both);
      expect(await (await subject!.another()).history(DIRECT, 10)).toEqual(both);
    });

    it('gives the last N exchanges of the history, oldest first', async () => {
      const store = await use();
      for (const id of ['1', '2', '3', '4']) {
        await store.accept(aMessage(id));
        await store.finish(aMessage(id), `answer ${id}`, 10);
      }

      expect(await store.history(DIRECT, 2)).toEqual([...exchange('question 3', 'answer 3'), ...exchange('question 4', 'answer 4')]);
      expect(await store.history(DIRECT, 1)).toEqual(exchange('question 4', 'answer 4'));
      expect(await store.history(DIRECT, 0)).toEqual([]);
      expect(await store.history(DIRECT, 100)).toHaveLength(8);
    });

    it('keeps the last `keep` exchanges of a conversation when it finishes one', async () => {
      const store = await use();
      for (const id of ['1', '2', '3', '4']) {
        await store.accept(aMessage(id));
        await store.finish(aMessage(id), `answer ${id}`, 2);
      }
      expect(await store.history(DIRECT, 10)).toEqual([...exchange('question 3', 'answer 3'), ...exchange('question 4', 'answer 4')]);

      await store.accept(aMessage('5'));
      await store.finish(aMessage('5'), 'answer 5', 1);
      expect(await store.history(DIRECT, 10)).toEqual(exchange('question 5', 'answer 5'));

      await store.accept(aMessage('6'));
      await store.finish(aMessage('6'), 'answer 6', 0);
      expect(await store.history(DIRECT, 10)).toEqual([]);
    });

    it('keeps conversations apart: chats, threads, a chat without a thread and its threads, platforms', async () => {
      const store = await use();
      const conversations: ConversationKey[] = [
        { platform: 'telegram', chatId: '-100777', threadId: null },
        { platform: 'telegram', chatId: '-100777', threadId: '42' },
        { platform: 'telegram', chatId: '-100777', threadId: '43' },
        { platform: 'telegram', chatId: '-100888', threadId: '42' },
        { platform: 'slack', chatId: '-100777', threadId: null },
      ];
      // One message id in every conversation: ids are the platform's, unique within a chat at most.
      for (const [index, conversation] of conversations.entries()) {
        expect(await store.accept(aMessage('1', conversation, `question in ${index}`))).toBe(true);
      }
      expect(await store.pending()).toHaveLength(conversations.length);

      for (const [index, conversation] of conversations.entries()) {
        await store.finish(aMessage('1', conversation, `question in ${index}`), `answer in ${index}`, 10);
      }

      for (const [index, conversation] of conversations.entries()) {
        expect(await store.history(conversation, 10)).toEqual(exchange(`question in ${index}`, `answer in ${index}`));
      }
      expect(await store.pending()).toEqual([]);
    });

    it('accepts in one conversation a message id answered in another', async () => {
      const store = await use();
      await store.accept(aMessage('1', DIRECT));
      await store.finish(aMessage('1', DIRECT), 'answer', 10);

      expect(await store.accept(aMessage('1', TOPIC))).toBe(true);
      expect(await store.accept(aMessage('1', { ...TOPIC, threadId: null }))).toBe(true);
      expect(await store.pending()).toEqual([aMessage('1', TOPIC), aMessage('1', { ...TOPIC, threadId: null })]);
    });

    it('finishes one message of a conversation and leaves the others pending', async () => {
      const store = await use();
      await store.accept(aMessage('1', TOPIC));
      await store.accept(aMessage('2', TOPIC));
      await store.accept(aMessage('1', DIRECT));

      await store.finish(aMessage('2', TOPIC), 'answer', 10);

      expect(await store.pending()).toEqual([aMessage('1', TOPIC), aMessage('1', DIRECT)]);
    });
  });
}

/** What every InboundCursorStore promises; each test gets a fresh, empty one. */
export function describeInboundCursorStoreContract(name: string, makeSubject: () => Promise<InboundCursorStoreSubject>): void {
  describe(`${name} (InboundCursorStore contract)`, () => {
    let subject: InboundCursorStoreSubject | undefined;
    const use = async () => {
      subject = await makeSubject();
      return subject.cursors;
    };

    afterEach(async () => {
      await subject?.cleanup?.();
      subject = undefined;
    });

    it('has no cursor before one is set', async () => {
      const cursors = await use();
      expect(await cursors.get('telegram')).toBeNull();
    });

    it('gives back the last cursor set, also after a restart', async () => {
      const cursors = await use();
      await cursors.set('telegram', '1001');
      await cursors.set('telegram', '1002');

      expect(await cursors.get('telegram')).toBe('1002');
      expect(await (await subject!.another()).get('telegram')).toBe('1002');
    });

    it('keeps a cursor per platform', async () => {
      const cursors = await use();
      const session = JSON.stringify({ session: 'abc', sequence: 17, resume: 'wss://gateway.example/?v=10' });
      await cursors.set('telegram', '1001');
      await cursors.set('discord', session);

      expect(await cursors.get('telegram')).toBe('1001');
      expect(await cursors.get('discord')).toBe(session);
      expect(await cursors.get('slack')).toBeNull();
    });
  });
}
