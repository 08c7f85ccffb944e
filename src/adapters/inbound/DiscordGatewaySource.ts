import type { InboundChatSource, InboundCursorStore, ReceiverHealth } from '../../application/ports/InboundChat.js';
import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import { apiRoot } from '../delivery/platformHttp.js';
import { DiscordGatewayConnection } from './DiscordGatewayConnection.js';
import type { DiscordConnectionOptions } from './discordGatewayProtocol.js';
import { discordHeaders, MAX_BACKOFF_MS, PLATFORM, type Dispatch } from './discordGatewayProtocol.js';

export interface DiscordGatewayOptions extends DiscordConnectionOptions {
  /** Keeps the session id and sequence under `discord`, so that a restart resumes the session. */
  cursors: InboundCursorStore;
}

/** The Discord Gateway over a WebSocket: see DiscordGatewaySource. */
export function createDiscordGatewaySource(options: DiscordGatewayOptions): InboundChatSource {
  return new DiscordGatewaySource(options);
}

/** What the cursor store keeps under `discord`: the session to resume and how far it was handled. */
interface StoredSession {
  session_id: string;
  resume_gateway_url: string;
  /** The bot's user id: a resumed session gets no READY to learn it from. */
  user_id: string;
  /** The sequence of the last dispatch handled (a message handed over, or one not for the bot). */
  seq: number;
}

/**
 * Receives Discord messages over the Gateway (https://discord.com/developers/docs/events/gateway),
 * API v10, JSON: Identify with GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT, heartbeats on
 * the Timer, and Resume (on `resume_gateway_url`, with the last sequence) after a dropped
 * connection, a Reconnect or a missed heartbeat ACK, so that Discord replays what was sent
 * meanwhile. Its session id and the sequence of the last dispatch handled are kept in the cursor
 * store, so a restart resumes too, as long as Discord still holds the session (briefly: after
 * that a new session starts, and what was sent in between is not replayed).
 *
 * For the bot: direct messages, and in servers the messages that mention it or reply to it;
 * never a bot's or a webhook's, never system messages. A thread is a channel of its own in
 * Discord, so a message in a thread has the thread's id as `chatId` and no `threadId`, and the
 * answer is posted into the thread.
 *
 * The connection itself is DiscordGatewayConnection; which messages are for the bot,
 * discordMessages.ts.
 */
export class DiscordGatewaySource extends DiscordGatewayConnection implements InboundChatSource {
  readonly platform = PLATFORM;
  private readonly cursors: InboundCursorStore;
  private deliver: ((message: InboundMessage) => Promise<void>) | null = null;
  private writes: Promise<void> = Promise.resolve();
  private readonly queue: Dispatch[] = [];
  /** The hand-over of queued dispatches under way, if any. */
  private draining: Promise<void> | null = null;

  constructor(options: DiscordGatewayOptions) {
    super(options);
    this.cursors = options.cursors;
  }

  async start(deliver: (message: InboundMessage) => Promise<void>, health?: ReceiverHealth): Promise<void> {
    if (this.deliver) throw new Error('The Discord gateway source is already started.');
    this.health = health ?? null;
    // Without a token there is nothing to connect as: "discord needs platforms.discord.bot_token (or DISCORD_BOT_TOKEN)."
    this.settings.require('bot_token');
    this.deliver = deliver;
    await this.restoreSession();
    const started = new Promise<void>((resolve, reject) => (this.startup = { resolve, reject }));
    void this.run().catch((error: unknown) => this.fail(`The Discord gateway source failed (${errorText(error)}).`));
    return started;
  }

  async stop(): Promise<void> {
    if (this.stopping) return this.writes;
    this.stopping = true;
    this.abort.abort();
    this.settleStartup();
    const connection = this.connection;
    if (connection) await this.close(connection);
    // A deliver under way is let finish, so that a message handed over is not handed over again.
    await this.draining;
    if (this.dirty) this.writeCursor();
    await this.writes;
  }

  /** `POST /channels/{id}/typing` (https://discord.com/developers/docs/resources/channel#trigger-typing-indicator); it shows for about 10 s. */
  async typing(conversation: ConversationKey): Promise<void> {
    const channelId = conversation.threadId ?? conversation.chatId;
    try {
      const answer = await this.http.call({
        url: `${apiRoot(this.settings.require('base_url'))}/channels/${encodeURIComponent(channelId)}/typing`,
        method: 'POST',
        headers: discordHeaders(this.settings),
      });
      if (answer.status >= 300)
        this.logger.debug(`Discord did not show typing in channel ${channelId} (HTTP ${answer.status}: ${this.http.clean(answer.text)})`);
    } catch (error) {
      // Only a sign while a turn runs: a failure to show it never holds up the answer.
      this.logger.debug(`Discord did not show typing in channel ${channelId} (${errorText(error)})`);
    }
  }

  // --- messages -------------------------------------------------------------------------------

  protected override enqueue(dispatch: Dispatch): void {
    this.queue.push(dispatch);
    this.draining ??= this.drain();
  }

  /**
   * Hands messages over one at a time, in arrival order, each before the cursor moves past it.
   * Once stopping, it finishes the hand-over under way (and records it) and takes no other.
   */
  private async drain(): Promise<void> {
    // Goes on after `draining` is set, and clears it in the same step as it finds the queue empty.
    await Promise.resolve();
    try {
      while (this.queue.length > 0 && !this.stopping) {
        const dispatch = this.queue.shift()!;
        if (dispatch.message && !(await this.handOver(dispatch.message))) return;
        if (dispatch.session === null || dispatch.session !== this.session?.id) continue;
        this.handledSeq = dispatch.seq;
        this.dirty = true;
        if (dispatch.message || dispatch.checkpoint) {
          this.writeCursor();
          await this.writes;
        }
      }
    } finally {
      this.draining = null;
    }
  }

  /** Awaits `deliver`, retrying with back-off while it fails; false when stopped first. */
  private async handOver(message: InboundMessage): Promise<boolean> {
    for (let attempt = 0; !this.stopping; attempt += 1) {
      try {
        await this.deliver!(message);
        if (attempt > 0) this.logger.info(`Discord message ${message.messageId} was handed over after ${attempt} failed attempt(s)`);
        return true;
      } catch (error) {
        if (attempt === 0) this.logger.warn(`Could not hand over Discord message ${message.messageId} (${errorText(error)}); retrying`);
        await this.timer.wait(Math.min(1000 * 2 ** attempt, MAX_BACKOFF_MS), this.abort.signal, { background: true });
      }
    }
    return false;
  }

  // --- the cursor -----------------------------------------------------------------------------

  private async restoreSession(): Promise<void> {
    let stored: string | null;
    try {
      stored = await this.cursors.get(PLATFORM);
    } catch (error) {
      this.logger.warn(`Could not read the stored Discord gateway session (${errorText(error)}); starting a new one`);
      return;
    }
    if (stored === null) return;
    const session = parseStoredSession(stored);
    if (!session) {
      this.logger.warn('The stored Discord gateway session is unreadable; starting a new one');
      return;
    }
    this.session = { id: session.session_id, resumeUrl: session.resume_gateway_url, userId: session.user_id };
    this.receivedSeq = session.seq;
    this.handledSeq = session.seq;
    this.sessionLost = false;
  }

  /** Queues a write of the session and handled sequence; writes happen one after another. */
  protected override writeCursor(): void {
    const session = this.session;
    const seq = this.handledSeq;
    this.dirty = false;
    if (!session || seq === null) return;
    const stored: StoredSession = { session_id: session.id, resume_gateway_url: session.resumeUrl, user_id: session.userId, seq };
    this.writes = this.writes
      .then(() => this.cursors.set(PLATFORM, JSON.stringify(stored)))
      .catch((error: unknown) =>
        this.logger.warn(`Could not store the Discord gateway session (${errorText(error)}); a restart may start a new one`),
      );
  }
}

function parseStoredSession(text: string): StoredSession | null {
  try {
    const value = JSON.parse(text) as Partial<StoredSession>;
    const ok =
      typeof value.session_id === 'string' &&
      value.session_id !== '' &&
      typeof value.resume_gateway_url === 'string' &&
      /^wss?:\/\//.test(value.resume_gateway_url) &&
      typeof value.user_id === 'string' &&
      /^\d+$/.test(value.user_id) &&
      typeof value.seq === 'number' &&
      Number.isInteger(value.seq);
    return ok ? (value as StoredSession) : null;
  } catch {
    return null;
  }
}
