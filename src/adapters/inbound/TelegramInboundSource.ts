import type { InboundChatSource, InboundCursorStore, ReceiverHealth } from '../../application/ports/InboundChat.js';
import type { Logger } from '../../application/ports/Logger.js';
import { PlatformSendError } from '../../application/ports/PlatformSender.js';
import type { Timer } from '../../application/ports/Timer.js';
import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import { apiRoot, PlatformHttp, retryAfterMs, type PlatformAnswer } from '../delivery/platformHttp.js';
import { platformSettings, type PlatformSettings } from '../delivery/PlatformSettings.js';
import { inboundMessageOf, TELEGRAM, type Bot, type TelegramUpdate, type TelegramUser } from './telegramMessages.js';

export const DEFAULT_TELEGRAM_API = 'https://api.telegram.org';
/** How long Telegram holds one getUpdates open when nothing arrives. */
export const DEFAULT_POLL_SECONDS = 30;
/** The time a long poll may take on top of the seconds Telegram holds it. */
const POLL_HEADROOM_MS = 15_000;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

export interface TelegramInboundOptions {
  /** `platforms.telegram.bot_token` (or `TELEGRAM_BOT_TOKEN`). */
  botToken: string;
  /** `platforms.telegram.base_url`: the Bot API root; default https://api.telegram.org. */
  baseUrl?: string;
  /** How long getMe and sendChatAction may take (`platforms.telegram.timeout_seconds`); default 10 s. */
  requestTimeoutMs?: number;
  /** The `timeout` of each getUpdates long poll, in seconds; default 30. */
  pollSeconds?: number;
  /** Where the next update id is kept between runs, under `telegram`. */
  cursors: InboundCursorStore;
  logger: Logger;
  /** The back-off between attempts after a failure. */
  timer: Timer;
}

/**
 * What people write to a Telegram bot, by long polling getUpdates
 * (https://core.telegram.org/bots/api#getupdates). See docs/chat-platforms.md#telegram.
 */
export function createTelegramInboundSource(options: TelegramInboundOptions): InboundChatSource {
  return new TelegramInboundSource(options);
}

interface TelegramReply {
  ok?: boolean;
  result?: unknown;
  description?: string;
  parameters?: { retry_after?: number };
}

/** A failure that retrying cannot mend: the token is refused. */
class Refused extends PlatformSendError {
  constructor(message: string) {
    super('refused', message);
  }
}

/** A failure worth retrying; `reason` groups repeats so that an outage is logged once. */
class Setback extends Error {
  constructor(
    readonly reason: 'unreachable' | 'conflict' | 'rate_limited' | 'unavailable' | 'handover' | 'cursor',
    message: string,
    readonly waitMs: number | null = null,
  ) {
    super(message);
  }
}

interface Outage {
  reason: Setback['reason'];
  since: number;
  attempts: number;
}

interface Run {
  abort: AbortController;
  loop: Promise<void> | null;
}

class TelegramInboundSource implements InboundChatSource {
  readonly platform = TELEGRAM;
  private readonly settings: PlatformSettings;
  private readonly http: PlatformHttp;
  private readonly pollSeconds: number;
  private run: Run | null = null;
  /** The next update id to ask for, as last written to the cursor store; null before the first. */
  private offset: number | null = null;

  constructor(private readonly options: TelegramInboundOptions) {
    const timeoutSeconds = (options.requestTimeoutMs ?? 10_000) / 1000;
    this.settings = platformSettings(
      TELEGRAM,
      { bot_token: options.botToken, base_url: options.baseUrl ?? DEFAULT_TELEGRAM_API, timeout_seconds: timeoutSeconds },
      {},
      {},
    );
    this.http = new PlatformHttp(this.settings, ['bot_token']);
    this.pollSeconds = Math.max(1, Math.round(options.pollSeconds ?? DEFAULT_POLL_SECONDS));
  }

  async start(deliver: (message: InboundMessage) => Promise<void>, health?: ReceiverHealth): Promise<void> {
    if (this.run !== null) throw new Error('The Telegram receiver is already running.');
    const run: Run = { abort: new AbortController(), loop: null };
    this.run = run;
    try {
      this.offset = this.offsetFrom(await this.options.cursors.get(TELEGRAM));
      let bot: Bot | null = null;
      try {
        bot = await this.whoAmI(run.abort.signal);
      } catch (error) {
        if (error instanceof Refused) throw error;
        // Telegram out of reach at start: the loop asks again, logging the outage once.
        health?.down(errorText(error));
      }
      if (!run.abort.signal.aborted) run.loop = this.loop(run.abort.signal, bot, deliver, health);
    } catch (error) {
      if (this.run === run) this.run = null;
      throw error;
    }
  }

  async stop(): Promise<void> {
    const run = this.run;
    if (run === null) return;
    this.run = null;
    run.abort.abort();
    await run.loop;
  }

  /** `sendChatAction` (https://core.telegram.org/bots/api#sendchataction); a failure only costs the sign. */
  async typing(conversation: ConversationKey): Promise<void> {
    if (conversation.platform !== TELEGRAM) return;
    const body: Record<string, unknown> = { chat_id: conversation.chatId, action: 'typing' };
    if (conversation.threadId !== null) body.message_thread_id = Number(conversation.threadId);
    try {
      const answer = await this.http.call({ url: this.url('sendChatAction'), json: body });
      if (answer.status !== 200) this.options.logger.debug(`telegram: sendChatAction answered HTTP ${answer.status}: ${this.said(answer)}`);
    } catch (error) {
      this.options.logger.debug(`telegram: sendChatAction failed: ${errorText(error)}`);
    }
  }

  private async loop(
    signal: AbortSignal,
    knownBot: Bot | null,
    deliver: (message: InboundMessage) => Promise<void>,
    health: ReceiverHealth | undefined,
  ): Promise<void> {
    const { logger, timer } = this.options;
    let bot = knownBot;
    let outage = null as Outage | null;
    let backoffMs = FIRST_BACKOFF_MS;
    const recovered = (): void => {
      if (outage === null) return;
      const seconds = Math.round((timer.monotonicNow() - outage.since) / 1000);
      logger.info(
        `telegram: receiving messages again after ${seconds} s (${outage.attempts} failed attempt${outage.attempts === 1 ? '' : 's'})`,
      );
      outage = null;
    };
    while (!signal.aborted) {
      try {
        if (bot === null) {
          // Telegram knows the bot again: it receives, though the first poll may be held a while.
          bot = await this.whoAmI(signal);
          health?.up();
        }
        const updates = await this.updates(signal);
        // Telegram answers again: that ends an outage of its own; one of handing over ends once that works.
        if (outage?.reason !== 'handover' && outage?.reason !== 'cursor') recovered();
        health?.up();
        await this.handOver(updates, bot, deliver, signal);
        recovered();
        backoffMs = FIRST_BACKOFF_MS;
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof Refused) {
          // Whoever started the source starts it again, or nobody does: then it says so itself.
          if (health) health.ended(error.message);
          else logger.error(`${error.message}; no Telegram messages are received until the agent is restarted with a working token`);
          break;
        }
        const setback = error instanceof Setback ? error : new Setback('unavailable', `telegram: receiving failed: ${errorText(error)}`);
        if (outage !== null && outage.reason === setback.reason) {
          outage.attempts += 1;
        } else {
          // One line when an outage begins or its cause changes; one more when it ends.
          logger.warn(setback.message);
          // Messages that cannot be handed over or acknowledged still arrive: the receiver is up.
          if (setback.reason !== 'handover' && setback.reason !== 'cursor') health?.down(setback.message);
          outage =
            outage === null
              ? { reason: setback.reason, since: timer.monotonicNow(), attempts: 1 }
              : { ...outage, reason: setback.reason, attempts: outage.attempts + 1 };
        }
        const waitMs = setback.waitMs ?? backoffMs;
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
        await timer.wait(waitMs, signal, { background: true });
      }
    }
  }

  /** Hands over each update meant for the bot, moving the stored offset past every update it is done with. */
  private async handOver(
    updates: TelegramUpdate[],
    bot: Bot,
    deliver: (message: InboundMessage) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    let done: number | null = null;
    for (const update of updates) {
      if (signal.aborted) break;
      if (typeof update?.update_id !== 'number') continue;
      const message = inboundMessageOf(update, bot);
      if (message !== null) {
        try {
          await deliver(message);
        } catch (error) {
          // Not acknowledged: Telegram gives the update again, as the next poll asks from the same offset.
          if (done !== null) await this.keepOffset(done);
          const where =
            message.conversation.threadId === null
              ? message.conversation.chatId
              : `${message.conversation.chatId}:${message.conversation.threadId}`;
          throw new Setback(
            'handover',
            `telegram: message ${message.messageId} in ${where} could not be handed over (${errorText(error)}); retrying`,
          );
        }
      }
      done = update.update_id + 1;
      if (message !== null) await this.keepOffset(done);
    }
    if (done !== null) await this.keepOffset(done);
  }

  private async keepOffset(next: number): Promise<void> {
    if (next === this.offset) return;
    try {
      await this.options.cursors.set(TELEGRAM, String(next));
    } catch (error) {
      throw new Setback('cursor', `telegram: the update offset could not be stored (${errorText(error)}); retrying`);
    }
    // Only a stored offset is sent to Telegram, which forgets the updates below it.
    this.offset = next;
  }

  private offsetFrom(stored: string | null): number | null {
    if (stored === null) return null;
    const offset = /^\d{1,15}$/.test(stored.trim()) ? Number(stored.trim()) : NaN;
    if (Number.isSafeInteger(offset) && offset > 0) return offset;
    this.options.logger.warn(
      `telegram: the stored update offset "${stored.slice(0, 40)}" is not an update id; starting from the updates Telegram still holds`,
    );
    return null;
  }

  /** `getMe` (https://core.telegram.org/bots/api#getme): the bot's id and username. */
  private async whoAmI(signal: AbortSignal): Promise<Bot> {
    const answer = await this.call('getMe', undefined, signal, this.settings.timeoutMs);
    const reply = (answer.json ?? {}) as TelegramReply;
    const bot = (reply.result ?? {}) as TelegramUser;
    if (answer.status === 200 && reply.ok === true && typeof bot.id === 'number') return { id: bot.id, username: bot.username ?? null };
    throw this.failure('getMe', answer, reply);
  }

  private async updates(signal: AbortSignal): Promise<TelegramUpdate[]> {
    const body: Record<string, unknown> = { timeout: this.pollSeconds, allowed_updates: ['message'] };
    if (this.offset !== null) body.offset = this.offset;
    const answer = await this.call('getUpdates', body, signal, this.pollSeconds * 1000 + POLL_HEADROOM_MS);
    const reply = (answer.json ?? {}) as TelegramReply;
    if (answer.status === 200 && reply.ok === true && Array.isArray(reply.result)) return reply.result as TelegramUpdate[];
    throw this.failure('getUpdates', answer, reply);
  }

  private async call(method: string, json: unknown, signal: AbortSignal, timeoutMs: number): Promise<PlatformAnswer> {
    try {
      return await this.http.call({ method: 'POST', url: this.url(method), json: json ?? {}, signal, timeoutMs });
    } catch (error) {
      // No answer: the address is out of reach or the request timed out (PlatformHttp's words, without the token).
      throw new Setback(
        'unreachable',
        `telegram: cannot receive messages: ${error instanceof PlatformSendError ? error.message : errorText(error)}; retrying`,
      );
    }
  }

  private failure(method: string, answer: PlatformAnswer, reply: TelegramReply): Error {
    const status = `HTTP ${answer.status}: ${this.said(answer, reply)}`;
    const token = this.settings.where('bot_token');
    if (answer.status === 401) return new Refused(`telegram refused the bot token (${status}); check ${token}`);
    // Telegram answers 404 to a token it cannot place; so does a base URL that is not a Bot API.
    if (answer.status === 404)
      return new Refused(`telegram does not know the bot token (${status}); check ${token} and ${this.settings.where('base_url')}`);
    if (answer.status === 409) {
      return new Setback(
        'conflict',
        `telegram: another program is receiving this bot's updates or a webhook is set (${status}); stop the other poller or delete the webhook (deleteWebhook); retrying`,
      );
    }
    if (answer.status === 429) {
      const waitMs = retryAfterMs(answer.headers, reply.parameters?.retry_after);
      return new Setback('rate_limited', `telegram is rate-limiting ${method} (${status}); waiting as it asks`, waitMs);
    }
    return new Setback('unavailable', `telegram: ${method} failed (${status}); retrying`);
  }

  private said(answer: PlatformAnswer, reply?: TelegramReply): string {
    return this.http.clean(reply?.description ?? answer.text) || 'no description';
  }

  private url(method: string): string {
    return `${apiRoot(this.settings.require('base_url'))}/bot${this.settings.require('bot_token')}/${method}`;
  }
}
