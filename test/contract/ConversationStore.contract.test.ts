import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileChatStore } from '../../src/adapters/chat/FileChatStore.js';
import { PostgresChatStore } from '../../src/adapters/postgres/PostgresChatStore.js';
import { InMemoryConversationStore } from '../support/fakes/InMemoryConversationStore.js';
import { InMemoryInboundCursorStore } from '../support/fakes/InMemoryInboundCursorStore.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { describeConversationStoreContract, describeInboundCursorStoreContract } from './ConversationStore.contract.js';

describeConversationStoreContract('InMemoryConversationStore', async () => {
  const store = new InMemoryConversationStore();
  return { store, another: async () => store };
});

describeInboundCursorStoreContract('InMemoryInboundCursorStore', async () => {
  const cursors = new InMemoryInboundCursorStore();
  return { cursors, another: async () => cursors };
});

/** A FileChatStore in a home of its own; `another` opens the same files again, as a restarted gateway does. */
async function fileChatStores(): Promise<{ first: FileChatStore; another: () => Promise<FileChatStore>; cleanup: () => Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), 'agent-chat-contract-'));
  return {
    first: new FileChatStore(home),
    another: async () => new FileChatStore(home),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
}

describeConversationStoreContract('FileChatStore', async () => {
  const { first, another, cleanup } = await fileChatStores();
  return { store: first, another, cleanup };
});

describeInboundCursorStoreContract('FileChatStore', async () => {
  const { first, another, cleanup } = await fileChatStores();
  return { cursors: first, another, cleanup };
});

describe('on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();
  const emptied = async () => {
    await suite.database.query('TRUNCATE agent_chat_messages, agent_chat_conversations, agent_chat_cursors');
    return new PostgresChatStore(suite.database);
  };

  describeConversationStoreContract('PostgresChatStore', async () => ({
    store: await emptied(),
    another: async () => new PostgresChatStore(suite.database),
  }));

  describeInboundCursorStoreContract('PostgresChatStore', async () => ({
    cursors: await emptied(),
    another: async () => new PostgresChatStore(suite.database),
  }));
});
