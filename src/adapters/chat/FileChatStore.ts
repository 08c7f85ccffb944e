import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { ConversationTurn } from '../../application/ports/AgentRunner.js';
import type { ConversationStore } from '../../application/ports/ConversationStore.js';
import type { InboundCursorStore } from '../../application/ports/InboundChat.js';
import { ANSWERED_IDS_REMEMBERED, conversationLabel, type ConversationKey, type InboundMessage } from '../../domain/chat/inboundMessage.js';
import { acquireFileLock } from '../persistence/fileLock.js';
import { ensurePrivateDirectory, readTextIfPresent, writeFileDurably } from '../persistence/fileSystem.js';

interface ConversationFile {
  conversation: string;
  turns: ConversationTurn[];
  answered: string[];
}

/**
 * Chat state in files under `$AGENT_HOME/chat/` (docs/chat-platforms.md): `pending.json` (messages
 * accepted and not answered), `conversations/<hash>.json` (each conversation's recent exchanges
 * and the ids of the messages it answered) and `cursors.json` (each receiver's place with its
 * platform). Every write is durable (synced before it resolves): a message is kept before its
 * receiver acknowledges it, and a cursor moves only once it is on disk. Changes are made one at a
 * time, by any number of gateways sharing the home (a kernel lock).
 */
export class FileChatStore implements ConversationStore, InboundCursorStore {
  private readonly directory: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(home: string) {
    this.directory = join(home, 'chat');
  }

  accept(message: InboundMessage): Promise<boolean> {
    return this.changing(async () => {
      const pending = await this.readPending();
      if (pending.some((kept) => sameMessage(kept, message))) return false;
      const file = await this.readConversation(message.conversation);
      if (file.answered.includes(message.messageId)) return false;
      await this.writePending([...pending, message]);
      return true;
    });
  }

  pending(): Promise<InboundMessage[]> {
    return this.serially(() => this.readPending());
  }

  history(key: ConversationKey, exchanges: number): Promise<ConversationTurn[]> {
    return this.serially(async () => {
      const { turns } = await this.readConversation(key);
      return exchanges <= 0 ? [] : turns.slice(-2 * exchanges);
    });
  }

  finish(message: InboundMessage, answer: string | null, keep: number): Promise<void> {
    return this.changing(async () => {
      const file = await this.readConversation(message.conversation);
      const turns: ConversationTurn[] =
        answer === null ? file.turns : [...file.turns, { role: 'user', content: message.text }, { role: 'assistant', content: answer }];
      await this.writeConversation(message.conversation, {
        conversation: conversationLabel(message.conversation),
        turns: keep <= 0 ? [] : turns.slice(-2 * keep),
        answered: [...file.answered.filter((id) => id !== message.messageId), message.messageId].slice(-ANSWERED_IDS_REMEMBERED),
      });
      await this.writePending((await this.readPending()).filter((kept) => !sameMessage(kept, message)));
    });
  }

  get(platform: string): Promise<string | null> {
    return this.serially(async () => (await this.readCursors())[platform] ?? null);
  }

  set(platform: string, cursor: string): Promise<void> {
    return this.changing(async () => {
      const cursors = await this.readCursors();
      await this.write('cursors.json', { ...cursors, [platform]: cursor });
    });
  }

  /**
   * A change (read, then write): one at a time in this process, and across the gateways sharing
   * the home through the kernel's lock on `chat/.lock` (one of them keeps what Slack pushes to it
   * while another answers).
   */
  private changing<T>(work: () => Promise<T>): Promise<T> {
    return this.serially(async () => {
      await ensurePrivateDirectory(this.directory);
      const lock = await acquireFileLock(join(this.directory, '.lock'));
      try {
        return await work();
      } finally {
        await lock.release();
      }
    });
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async readPending(): Promise<InboundMessage[]> {
    const text = await readTextIfPresent(join(this.directory, 'pending.json'));
    return text === null ? [] : ((JSON.parse(text) as { messages?: InboundMessage[] }).messages ?? []);
  }

  private writePending(messages: InboundMessage[]): Promise<void> {
    return this.write('pending.json', { messages });
  }

  private async readCursors(): Promise<Record<string, string>> {
    const text = await readTextIfPresent(join(this.directory, 'cursors.json'));
    return text === null ? {} : (JSON.parse(text) as Record<string, string>);
  }

  private async readConversation(key: ConversationKey): Promise<ConversationFile> {
    const text = await readTextIfPresent(this.conversationPath(key));
    if (text === null) return { conversation: conversationLabel(key), turns: [], answered: [] };
    const file = JSON.parse(text) as Partial<ConversationFile>;
    return { conversation: conversationLabel(key), turns: file.turns ?? [], answered: file.answered ?? [] };
  }

  private async writeConversation(key: ConversationKey, file: ConversationFile): Promise<void> {
    await ensurePrivateDirectory(join(this.directory, 'conversations'));
    await writeFileDurably(this.conversationPath(key), `${JSON.stringify(file, null, 2)}\n`);
  }

  /** A conversation's file is named by a hash of its label: chat and thread ids may hold any character. */
  private conversationPath(key: ConversationKey): string {
    const hash = createHash('sha256').update(conversationLabel(key)).digest('hex').slice(0, 32);
    return join(this.directory, 'conversations', `${key.platform}-${hash}.json`);
  }

  private async write(name: string, value: unknown): Promise<void> {
    await ensurePrivateDirectory(this.directory);
    await writeFileDurably(join(this.directory, name), `${JSON.stringify(value, null, 2)}\n`);
  }
}

function sameMessage(a: InboundMessage, b: InboundMessage): boolean {
  return a.messageId === b.messageId && conversationLabel(a.conversation) === conversationLabel(b.conversation);
}
