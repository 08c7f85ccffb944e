import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TELEGRAM_TOKEN } from './FakeTelegramServer.js';

/** The bot the fake answers getMe with. */
export const TELEGRAM_BOT = { id: 123456, is_bot: true, first_name: 'Delivery', username: 'delivery_bot' } as const;

export interface TelegramPoll {
  offset: number | undefined;
  timeout: number | undefined;
  allowed_updates: unknown;
}

interface HeldPoll {
  offset: number | undefined;
  response: ServerResponse;
}

type ScriptedPoll = { status: number; json: unknown; headers?: Record<string, string> } | 'drop';

/**
 * The receiving side of Telegram's Bot API as https://core.telegram.org/bots/api describes it:
 * `getMe`, `getUpdates` as a long poll (held open until an update arrives, updates below the
 * offset confirmed and forgotten), `sendChatAction`. Messages pushed by a test get the fields
 * Telegram fills in (ids, date, entities for @mentions and a leading /command).
 */
export class FakeTelegramUpdatesServer {
  readonly polls: TelegramPoll[] = [];
  readonly chatActions: Array<Record<string, unknown>> = [];
  /** The bodies of `sendMessage` calls: what the bot said, in order. */
  readonly sent: Array<Record<string, unknown>> = [];
  private sentWaiters: Array<{ count: number; resolve: () => void }> = [];
  /** Every request's path, in order, for checking that none went elsewhere. */
  readonly paths: string[] = [];
  /** Updates not yet confirmed by an offset above them. */
  private queue: Array<{ update_id: number } & Record<string, unknown>> = [];
  private held: HeldPoll[] = [];
  private scripted: ScriptedPoll[] = [];
  private pollWaiters: Array<{ when: (poll: TelegramPoll) => boolean; resolve: (poll: TelegramPoll) => void }> = [];
  private idleWaiters: Array<() => void> = [];
  private nextUpdateId = 700;
  private nextMessageId = 40;
  private server: Server | null = null;

  /** A fake on `port` (any free one by default): a server that comes back where it was. */
  static start(port = 0): Promise<FakeTelegramUpdatesServer> {
    return new FakeTelegramUpdatesServer().listen(port);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** Long polls being held open right now. */
  get heldPolls(): number {
    return this.held.length;
  }

  /** The ids of the updates Telegram still holds (not confirmed). */
  get pendingUpdateIds(): number[] {
    return this.queue.map((update) => update.update_id);
  }

  /**
   * Queues a `message` update: a private text from Ada unless `fields` say otherwise. Returns
   * its update id.
   */
  pushMessage(fields: Record<string, unknown> = {}): number {
    const message: Record<string, unknown> = {
      message_id: this.nextMessageId++,
      from: { id: 777, is_bot: false, first_name: 'Ada', username: 'ada' },
      chat: { id: 777, type: 'private', first_name: 'Ada', username: 'ada' },
      date: 1_760_000_000,
      ...fields,
    };
    if (typeof message.text === 'string' && message.entities === undefined) {
      const entities = entitiesOf(message.text);
      if (entities.length > 0) message.entities = entities;
    }
    return this.pushUpdate({ message });
  }

  /** Queues any update (an edited_message …); the update id is filled in. */
  pushUpdate(fields: Record<string, unknown>): number {
    const update = { update_id: this.nextUpdateId++, ...fields };
    this.queue.push(update);
    for (const poll of [...this.held]) {
      if (this.available(poll.offset).length > 0) this.answerHeld(poll);
    }
    return update.update_id;
  }

  /** The next getUpdates calls are answered this way (or their connection dropped), in order. */
  scriptPolls(...answers: ScriptedPoll[]): void {
    this.scripted.push(...answers);
  }

  /** Resolves once the bot has sent `count` messages in all. */
  waitForSent(count: number): Promise<void> {
    if (this.sent.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.sentWaiters.push({ count, resolve }));
  }

  /** Cuts the connections of the long polls held open, as a proxy or the network would. */
  dropHeldPolls(): void {
    for (const poll of this.held.splice(0)) poll.response.socket?.destroy();
  }

  /** Resolves once `count` getUpdates calls have come in. */
  waitForPolls(count: number): Promise<void> {
    return this.waitForPoll(() => this.polls.length >= count).then(() => undefined);
  }

  /** Resolves once a long poll is held open, waiting for an update. */
  async waitForHeldPoll(): Promise<void> {
    while (this.held.length === 0) await this.waitForPolls(this.polls.length + 1);
  }

  /** Resolves once no long poll is held open (the receiver closed its connection). */
  noHeldPolls(): Promise<void> {
    if (this.held.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves with the first getUpdates call, made already or to come, that `when` accepts. */
  waitForPoll(when: (poll: TelegramPoll) => boolean = () => true): Promise<TelegramPoll> {
    const made = this.polls.find(when);
    if (made !== undefined) return Promise.resolve(made);
    return new Promise((resolve) => this.pollWaiters.push({ when, resolve }));
  }

  async close(): Promise<void> {
    if (this.server === null) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private async listen(port: number): Promise<this> {
    this.server = createServer((request, response) => {
      let raw = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (raw += chunk));
      request.on('end', () => this.handle(request, raw, response));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return this;
  }

  private handle(request: IncomingMessage, raw: string, response: ServerResponse): void {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    this.paths.push(path);
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(path);
    if (match === null) return write(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
    if (match[1] !== TELEGRAM_TOKEN) return write(response, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    let body: Record<string, unknown>;
    try {
      body = raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return write(response, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' });
    }
    switch (match[2]) {
      case 'getMe':
        return write(response, 200, { ok: true, result: TELEGRAM_BOT });
      case 'sendMessage':
        this.sent.push(body);
        for (const waiter of [...this.sentWaiters]) {
          if (this.sent.length >= waiter.count) {
            this.sentWaiters.splice(this.sentWaiters.indexOf(waiter), 1);
            waiter.resolve();
          }
        }
        return write(response, 200, {
          ok: true,
          result: { message_id: this.nextMessageId++, chat: { id: body.chat_id }, text: body.text },
        });
      case 'sendChatAction':
        this.chatActions.push(body);
        return write(response, 200, { ok: true, result: true });
      case 'getUpdates':
        return this.getUpdates(body, response);
      default:
        return write(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
    }
  }

  private getUpdates(body: Record<string, unknown>, response: ServerResponse): void {
    const poll: TelegramPoll = {
      offset: typeof body.offset === 'number' ? body.offset : undefined,
      timeout: typeof body.timeout === 'number' ? body.timeout : undefined,
      allowed_updates: body.allowed_updates,
    };
    this.polls.push(poll);
    for (const waiter of [...this.pollWaiters]) {
      if (waiter.when(poll)) {
        this.pollWaiters.splice(this.pollWaiters.indexOf(waiter), 1);
        waiter.resolve(poll);
      }
    }
    const scripted = this.scripted.shift();
    if (scripted === 'drop') return void response.socket?.destroy();
    if (scripted !== undefined) return write(response, scripted.status, scripted.json, scripted.headers);
    // An offset confirms every update below it: Telegram forgets them.
    if (poll.offset !== undefined && poll.offset > 0) this.queue = this.queue.filter((update) => update.update_id >= poll.offset!);
    if (this.available(poll.offset).length > 0 || !poll.timeout)
      return write(response, 200, { ok: true, result: this.available(poll.offset) });
    const held: HeldPoll = { offset: poll.offset, response };
    this.held.push(held);
    response.on('close', () => {
      const index = this.held.indexOf(held);
      if (index >= 0) this.held.splice(index, 1);
      if (this.held.length === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  private available(offset: number | undefined): unknown[] {
    return this.queue.filter((update) => offset === undefined || update.update_id >= offset);
  }

  private answerHeld(poll: HeldPoll): void {
    this.held.splice(this.held.indexOf(poll), 1);
    write(poll.response, 200, { ok: true, result: this.available(poll.offset) });
  }
}

/** The entities Telegram marks in a text: @mentions, and a /command that opens it. */
function entitiesOf(text: string): Array<Record<string, unknown>> {
  const entities: Array<Record<string, unknown>> = [];
  const command = /^\/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?/.exec(text);
  if (command !== null) entities.push({ type: 'bot_command', offset: 0, length: command[0].length });
  for (const mention of text.matchAll(/(?<![\w@/])@[A-Za-z0-9_]{5,32}/g)) {
    entities.push({ type: 'mention', offset: mention.index, length: mention[0].length });
  }
  return entities;
}

function write(response: ServerResponse, status: number, json: unknown, headers: Record<string, string> = {}): void {
  if (response.destroyed || response.writableEnded) return;
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(json));
}
