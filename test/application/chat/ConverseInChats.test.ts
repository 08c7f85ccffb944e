import { describe, expect, it } from '@jest/globals';
import { AgentRunError } from '../../../src/application/ports/AgentRunner.js';
import { PENDING_LOOKED_AT_EVERY_MS, TYPING_EVERY_MS } from '../../../src/application/chat/ConverseInChats.js';
import type { ChatSettings } from '../../../src/application/ports/ChatSettings.js';
import type { ConversationKey, InboundMessage } from '../../../src/domain/chat/inboundMessage.js';
import { FakeAgentRunner } from '../../support/fakes/FakeAgentRunner.js';
import { FakeMemoryStore } from '../../support/fakes/FakeContextFiles.js';
import { InMemoryConversationStore } from '../../support/fakes/InMemoryConversationStore.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingDeliveryChannel } from '../../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { cronHarness } from '../../support/cronHarness.js';
import { converseInChats } from '../../support/runPipeline.js';

const ALICE = '111';
const dm: ConversationKey = { platform: 'telegram', chatId: '111', threadId: null };
const topic: ConversationKey = { platform: 'telegram', chatId: '-100200', threadId: '7' };

let ids = 0;
function message(text: string, conversation = dm, userId = ALICE): InboundMessage {
  ids += 1;
  return { conversation, userId, userName: 'alice', messageId: String(ids), text };
}

/** Waits until every promise chain started so far has had its turn. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

function harness(settings: Partial<ChatSettings> = {}, store = new InMemoryConversationStore()) {
  const agent = new FakeAgentRunner();
  const channel = new RecordingDeliveryChannel(['telegram', 'slack']);
  const timer = new ManualTimer();
  const clock = new ManualClock('2026-11-26T10:00:00Z');
  const log = new RecordingLogger();
  const { settings: cronSettings } = cronHarness();
  const typed: ConversationKey[] = [];
  const chats = converseInChats({
    agent,
    memory: new FakeMemoryStore(),
    cronSettings,
    store,
    channel,
    settings: {
      historyTurns: 20,
      maxConcurrentTurns: 4,
      platforms: { telegram: { allowedUsers: new Set([ALICE]), toolsets: null } },
      ...settings,
    },
    clock,
    timer,
    log,
  });
  return {
    agent,
    store,
    channel,
    timer,
    clock,
    log,
    chats,
    typed,
    start: () => chats.start(new Map([['telegram', async (key: ConversationKey) => void typed.push(key)]])),
  };
}

describe('ConverseInChats', () => {
  it('answers an allowed message in the same chat and thread, with the conversation so far', async () => {
    const h = harness();
    await h.start();
    h.agent.reply('Hello Alice.', 'It is 3.');

    await h.chats.receive(message('hi', topic));
    await settled();
    await h.chats.receive(message('what is 1+2?', topic));
    await settled();

    expect(h.channel.sent.map(({ target, text }) => [target.destination, target.threadId, text])).toEqual([
      ['-100200', '7', 'Hello Alice.'],
      ['-100200', '7', 'It is 3.'],
    ]);
    expect(h.agent.requests[1]!.conversation).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello Alice.' },
    ]);
    expect(h.agent.requests[1]!.origin).toEqual({
      platform: 'telegram',
      chat_id: '-100200',
      thread_id: '7',
      user_id: ALICE,
      user_name: 'alice',
    });
    expect(h.agent.requests[1]!.toolsets).toEqual(['agent-chat']);
  });

  it('runs nothing for someone not allowed, and logs them once an hour', async () => {
    const h = harness();
    await h.start();

    for (let i = 0; i < 3; i += 1) await h.chats.receive(message('let me in', dm, '999'));
    h.clock.advance(3_600_000);
    await h.chats.receive(message('let me in', dm, '999'));
    await settled();

    expect(h.agent.requests).toEqual([]);
    expect(h.channel.sent).toEqual([]);
    expect(h.log.entries.filter((entry) => entry.message.includes('user 999'))).toHaveLength(2);
    expect(await h.store.pending()).toEqual([]);
  });

  it('takes one turn at a time per conversation, in arrival order, and conversations side by side', async () => {
    const h = harness({ maxConcurrentTurns: 2 });
    await h.start();
    const releases: Array<() => void> = [];
    h.agent.defaultReply = (request) => new Promise<string>((resolve) => releases.push(() => resolve(`re: ${request.context.task ?? ''}`)));

    await h.chats.receive(message('first', dm));
    await h.chats.receive(message('second', dm));
    await h.chats.receive(message('other chat', topic));
    await settled();
    expect(h.agent.requests).toHaveLength(2);

    releases.shift()!();
    await settled();
    await settled();
    expect(h.agent.requests).toHaveLength(3);
    expect(h.agent.requests[2]!.conversation?.at(0)).toEqual({ role: 'user', content: 'first' });
  });

  it('answers a message handed over twice once', async () => {
    const h = harness();
    await h.start();
    const twice = message('once please');

    await h.chats.receive(twice);
    await h.chats.receive(twice);
    await settled();
    await h.chats.receive(twice);
    await settled();

    expect(h.agent.requests).toHaveLength(1);
    expect(h.channel.sent).toHaveLength(1);
  });

  it('answers after a restart what was accepted and not answered', async () => {
    const h = harness();
    await h.store.accept(message('still owed'));

    await h.start();
    await settled();

    expect(h.channel.sent.map(({ text }) => text)).toEqual(['All good.']);
    expect(await h.store.pending()).toEqual([]);
  });

  it('answers a failed turn with one sentence, and keeps it out of the history', async () => {
    const h = harness();
    await h.start();
    h.agent.reply(new AgentRunError('failed', 'The model provider answered 500.'));

    await h.chats.receive(message('break'));
    await settled();

    expect(h.channel.sent.map(({ text }) => text)).toEqual(['Sorry, I could not answer that: The model provider answered 500.']);
    expect(await h.store.history(dm, 20)).toEqual([]);
  });

  it('shows typing while a turn runs, again every few seconds, and stops after', async () => {
    const h = harness();
    await h.start();
    let release!: () => void;
    h.agent.reply(() => new Promise<string>((resolve) => (release = () => resolve('done'))));

    await h.chats.receive(message('slow one'));
    await settled();
    h.timer.advance(TYPING_EVERY_MS);
    await settled();
    expect(h.typed).toHaveLength(2);
    release();
    await settled();
    h.timer.advance(TYPING_EVERY_MS * 3);
    await settled();
    expect(h.typed).toHaveLength(2);
  });

  it('narrows the tools to the platform’s toolsets', async () => {
    const h = harness({ platforms: { telegram: { allowedUsers: null, toolsets: ['web'] } } });
    await h.start();

    await h.chats.receive(message('search', dm, 'anyone'));
    await settled();

    expect(h.agent.requests[0]!.toolsets).toEqual(['web']);
  });

  describe('with gateways sharing one store', () => {
    it('keeps what reaches a gateway that does not answer, for the one that does; that one answers it within seconds, once', async () => {
      const store = new InMemoryConversationStore();
      const answering = harness({}, store);
      const keeping = harness({}, store);
      await answering.start();
      answering.agent.reply('Hello Alice.');

      await keeping.chats.receive(message('hi'));
      await settled();
      expect(keeping.agent.requests).toHaveLength(0);
      expect(await store.pending()).toHaveLength(1);

      answering.timer.advance(PENDING_LOOKED_AT_EVERY_MS);
      for (let turn = 0; turn < 5; turn += 1) await settled();
      answering.timer.advance(PENDING_LOOKED_AT_EVERY_MS);
      for (let turn = 0; turn < 5; turn += 1) await settled();

      expect(answering.channel.sent.map(({ text }) => text)).toEqual(['Hello Alice.']);
      expect(await store.pending()).toEqual([]);
    });

    it('takes no new turn once paused (its role lost), and answers what waited when it starts again', async () => {
      const h = harness();
      await h.start();
      h.chats.pause();
      h.agent.reply('Hello Alice.');

      await h.chats.receive(message('hi'));
      await settled();
      expect(h.agent.requests).toHaveLength(0);

      await h.start();
      for (let turn = 0; turn < 5; turn += 1) await settled();
      expect(h.channel.sent.map(({ text }) => text)).toEqual(['Hello Alice.']);
    });
  });
});
