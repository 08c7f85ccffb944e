import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router, type Request, type Response } from 'express';
import type { Clock } from '../../application/ports/Clock.js';
import type { InboundChatSource } from '../../application/ports/InboundChat.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import { apiRoot, PlatformHttp, type PlatformAnswer } from '../delivery/platformHttp.js';
import { platformSettings, type PlatformSettings } from '../delivery/PlatformSettings.js';
import { answerEarly, sendJson } from '../http/jsonAnswer.js';
import { declaredLength, readBody } from '../http/requestBody.js';
import { awaitingContinue } from '../http/webhookServer.js';
import { slackSignatureProblem, SLACK_SIGNATURE_WINDOW_SECONDS, type SlackSignatureProblem } from './slackSignature.js';
import { nonEmpty, slackMessageOf, type SlackEnvelope } from './slackMessages.js';

/** Where Slack posts events: the Request URL of the app's Event Subscriptions is `https://<host>/slack/events`. */
export const SLACK_EVENTS_PATH = '/slack/events';

const DEFAULT_BASE_URL = 'https://slack.com/api';
const DEFAULT_MAX_BODY_BYTES = 1_048_576;
const DEFAULT_BODY_READ_TIMEOUT_MS = 10_000;
/** How long a handed-over event (and message) is remembered, so that Slack's retries of it are answered without handing it over again. */
const REMEMBERED_FOR_MS = 60 * 60 * 1000;
/** At most this many are remembered; the oldest are forgotten first. */
const REMEMBERED_AT_MOST = 20_000;
/** What a 503 asks Slack to wait, in seconds (Slack retries on its own schedule all the same). */
const RETRY_AFTER_SECONDS = '30';

export interface SlackEventsSourceOptions {
  /** The bot token (`xoxb-…`, `platforms.slack.bot_token`), for `auth.test` at start. */
  botToken: string;
  /** The app's Signing Secret (`platforms.slack.signing_secret`): every request from Slack is signed with it. */
  signingSecret: string;
  /** The Web API root; default https://slack.com/api (a test server's address in tests). */
  baseUrl?: string;
  /** How long `auth.test` may take, in milliseconds; default 10 s. */
  timeoutMs?: number;
  /** Judges the age of a request's timestamp, and how long events are remembered. */
  clock: Clock;
  logger: Logger;
  /** The largest body read (the webhook listener's `max_body_bytes`); default 1 MiB. */
  maxBodyBytes?: number;
  /** How long a body may take to arrive (the webhook listener's body deadline); default 10 s. */
  bodyReadTimeoutMs?: number;
}

type Deliver = (message: InboundMessage) => Promise<void>;

/**
 * Slack's Events API (https://api.slack.com/apis/events-api) as an InboundChatSource: Slack posts
 * each event to `POST /slack/events` on the gateway's HTTP listener (mount `router` there:
 * createWebhookApp's `slackEvents`). A request is believed only with a valid signature of the
 * app's signing secret made within five minutes (else 401, nothing handed over); the body is read
 * raw, within the size limit, before it is parsed.
 *
 * Handed over: a direct message to the bot (`message` with `channel_type: im`) and a mention of
 * it in a channel (`app_mention`), from a person: anything with a `bot_id` or a `subtype` (edits,
 * deletions, joins, bot messages) is not, nor a `message` event outside a direct message (the
 * `app_mention` of the same message is the one taken), nor the bot's own. The mention `<@BOT>` is
 * cut out of the text and Slack's `&amp;`, `&lt;`, `&gt;` read back as `&`, `<`, `>`.
 *
 * Conversations: a direct message is the chat (`threadId` null) unless it was written in a
 * thread (its `thread_ts`); a mention in a channel is answered in a thread: the one it was
 * written in, else the one it starts (its own `ts`), so each top-level mention is a conversation
 * of its own.
 *
 * Slack is answered 200 once `deliver` resolved (the conversation use case only queues the
 * turn); when `deliver` fails, or the source is stopping, 503, and Slack retries the event later.
 * Slack also retries an event it got no 200 for within 3 s: a retry of an event being handed over
 * waits for that, and one of an event already handed over is answered 200 without handing it over
 * again (events and messages are remembered for an hour). Nothing needs keeping across restarts:
 * an event answered 200 is never sent again.
 *
 * Slack has no typing sign for bots in the Web API: `typing` does nothing.
 */
export class SlackEventsSource implements InboundChatSource {
  readonly platform = 'slack';
  /** `POST /slack/events` (405 for other methods), to mount on the gateway's HTTP listener. */
  readonly router: Router;
  private readonly settings: PlatformSettings;
  private readonly http: PlatformHttp;
  private readonly signingSecret: string;
  private readonly maxBodyBytes: number;
  private readonly bodyReadTimeoutMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly handedOver: RecentKeys;
  /** Deliveries under way, by event id and by message, for a retry that arrives meanwhile. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private deliver: Deliver | null = null;
  private botUserId: string | null = null;
  /** One delivery at a time, in the order the requests came: the tail of that line. */
  private line: Promise<void> = Promise.resolve();
  /** Whether the last request was refused for its signature, or the last delivery failed: each outage is logged once. */
  private refusingSignatures = false;
  private failingDeliveries = false;

  constructor(options: SlackEventsSourceOptions) {
    const section: Record<string, unknown> = {
      bot_token: options.botToken,
      signing_secret: options.signingSecret,
      base_url: options.baseUrl ?? DEFAULT_BASE_URL,
    };
    if (options.timeoutMs !== undefined) section.timeout_seconds = options.timeoutMs / 1000;
    this.settings = platformSettings('slack', section, {}, {});
    this.http = new PlatformHttp(this.settings, ['bot_token']);
    this.signingSecret = options.signingSecret;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.bodyReadTimeoutMs = options.bodyReadTimeoutMs ?? DEFAULT_BODY_READ_TIMEOUT_MS;
    this.clock = options.clock;
    this.logger = options.logger;
    this.handedOver = new RecentKeys(options.clock, REMEMBERED_FOR_MS, REMEMBERED_AT_MOST);
    this.router = Router();
    this.router.post(SLACK_EVENTS_PATH, (req: Request, res: Response) => this.handle(req, res));
    this.router.all(SLACK_EVENTS_PATH, (req: Request, res: Response) => {
      answerEarly(req, res, 405, { error: 'Method not allowed' }, { Allow: 'POST' });
    });
  }

  /**
   * Learns the bot's user id with `auth.test` (to tell its own messages and its mention apart),
   * then takes events; rejects with one sentence when the token is refused or Slack cannot be
   * reached, or when there is no signing secret.
   */
  async start(deliver: Deliver): Promise<void> {
    if (this.signingSecret.trim() === '') {
      throw new Error(
        `The Slack receiver needs the app's Signing Secret in ${this.settings.where('signing_secret')}; copy it from the app's Basic Information page.`,
      );
    }
    if (this.settings.get('bot_token') === undefined) {
      throw new Error(`The Slack receiver needs the bot token in ${this.settings.where('bot_token')}.`);
    }
    this.botUserId = await this.whoAmI();
    this.deliver = deliver;
    this.logger.info('slack: receiving events', { path: SLACK_EVENTS_PATH, bot_user: this.botUserId });
  }

  /** From now on every request is answered 503 (Slack retries later); resolves once the delivery under way, if any, ended. */
  async stop(): Promise<void> {
    this.deliver = null;
    await this.line;
  }

  /** Slack's Web API has no typing sign for bots: nothing to do. */
  async typing(_conversation: ConversationKey): Promise<void> {}

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.deliver === null) {
      answerEarly(
        req,
        res,
        503,
        { error: 'Slack events are not being received right now; retry later.' },
        { 'Retry-After': RETRY_AFTER_SECONDS },
      );
      return;
    }
    const declared = declaredLength(req);
    if (declared !== null && declared > this.maxBodyBytes) {
      this.logger.warn('slack events refused: payload too large', { content_length: declared, max_body_bytes: this.maxBodyBytes });
      answerEarly(req, res, 413, { error: 'Payload too large' });
      return;
    }
    if (awaitingContinue.delete(req)) res.writeContinue();
    const read = await readBody(req, this.maxBodyBytes, this.bodyReadTimeoutMs);
    switch (read.kind) {
      case 'too_large':
        this.logger.warn('slack events refused: payload too large', { max_body_bytes: this.maxBodyBytes });
        answerEarly(req, res, 413, { error: 'Payload too large' });
        return;
      case 'timeout':
        answerEarly(req, res, 408, { error: 'Request timeout' });
        return;
      case 'aborted':
        req.socket.destroy();
        return;
    }

    const problem = slackSignatureProblem(
      this.signingSecret,
      header(req, 'x-slack-request-timestamp'),
      header(req, 'x-slack-signature'),
      read.body,
      this.clock.now().getTime(),
    );
    if (problem !== null) {
      this.signatureRefused(problem);
      sendJson(res, 401, { error: 'The request does not carry a valid Slack signature made in the last 5 minutes.' });
      return;
    }
    if (this.refusingSignatures) {
      this.refusingSignatures = false;
      this.logger.info('slack events: signed requests are accepted again');
    }

    let envelope: SlackEnvelope;
    try {
      envelope = JSON.parse(read.body.toString('utf8')) as SlackEnvelope;
    } catch {
      sendJson(res, 400, { error: 'The body is not JSON.' });
      return;
    }
    if (typeof envelope !== 'object' || envelope === null) {
      sendJson(res, 400, { error: 'The body is not a JSON object.' });
      return;
    }

    if (envelope.type === 'url_verification') {
      if (typeof envelope.challenge !== 'string') {
        sendJson(res, 400, { error: 'The url_verification request has no challenge.' });
        return;
      }
      this.logger.info('slack: the Request URL was verified');
      sendJson(res, 200, { challenge: envelope.challenge });
      return;
    }
    if (envelope.type === 'app_rate_limited') {
      this.logger.warn('slack: Slack is holding back events of this app (app_rate_limited)');
      sendJson(res, 200, { status: 'ignored' });
      return;
    }
    if (envelope.type !== 'event_callback') {
      sendJson(res, 200, { status: 'ignored' });
      return;
    }

    const message = slackMessageOf(envelope, this.botUserId);
    if (message === null) {
      sendJson(res, 200, { status: 'ignored' });
      return;
    }
    const keys = [`message:${message.conversation.chatId}:${message.messageId}`];
    if (typeof envelope.event_id === 'string' && envelope.event_id !== '') keys.unshift(`event:${envelope.event_id}`);
    const retry = header(req, 'x-slack-retry-num');
    if (retry !== undefined) {
      this.logger.debug('slack: a retried event', {
        event_id: envelope.event_id,
        retry_num: retry,
        retry_reason: header(req, 'x-slack-retry-reason'),
      });
    }

    if (keys.some((key) => this.handedOver.has(key))) {
      sendJson(res, 200, { status: 'duplicate' });
      return;
    }
    const underWay = keys.map((key) => this.inFlight.get(key)).find((delivery) => delivery !== undefined);
    const delivery = underWay ?? this.handOver(message, keys);
    try {
      await delivery;
    } catch {
      sendJson(res, 503, { error: 'The message could not be taken right now; retry later.' }, { 'Retry-After': RETRY_AFTER_SECONDS });
      return;
    }
    sendJson(res, 200, { status: underWay === undefined ? 'accepted' : 'duplicate' });
  }

  /** Queues the message behind the ones before it; resolves once `deliver` took it (and it is remembered). */
  private handOver(message: InboundMessage, keys: readonly string[]): Promise<void> {
    const delivery = this.line.then(async () => {
      const deliver = this.deliver;
      if (deliver === null) throw new Error('the Slack receiver is stopping');
      try {
        await deliver(message);
      } catch (error) {
        if (!this.failingDeliveries) {
          this.failingDeliveries = true;
          this.logger.warn('slack: a message could not be handed over; Slack will send it again', { error: errorText(error) });
        }
        throw error;
      }
      if (this.failingDeliveries) {
        this.failingDeliveries = false;
        this.logger.info('slack: messages are handed over again');
      }
      for (const key of keys) this.handedOver.add(key);
    });
    this.line = delivery.catch(() => undefined);
    for (const key of keys) this.inFlight.set(key, delivery);
    void this.line.then(() => {
      for (const key of keys) if (this.inFlight.get(key) === delivery) this.inFlight.delete(key);
    });
    return delivery;
  }

  private signatureRefused(problem: SlackSignatureProblem): void {
    if (this.refusingSignatures) return;
    this.refusingSignatures = true;
    const why =
      problem === 'stale'
        ? `its timestamp is more than ${SLACK_SIGNATURE_WINDOW_SECONDS / 60} minutes off this host's clock; check the clock`
        : problem === 'missing'
          ? 'it carries no X-Slack-Signature or X-Slack-Request-Timestamp'
          : `its signature does not match; check that ${this.settings.where('signing_secret')} is the app's Signing Secret`;
    this.logger.warn(`slack events refused: ${why}`);
  }

  /** `auth.test` (https://api.slack.com/methods/auth.test): the bot's user id. */
  private async whoAmI(): Promise<string> {
    let answer: PlatformAnswer;
    try {
      answer = await this.http.call({
        url: `${apiRoot(this.settings.require('base_url'))}/auth.test`,
        json: {},
        headers: { authorization: `Bearer ${this.settings.require('bot_token')}` },
      });
    } catch (error) {
      throw this.startFailure(errorText(error));
    }
    const reply = (answer.json ?? {}) as { ok?: unknown; error?: unknown; user_id?: unknown };
    const said = typeof reply.error === 'string' ? this.http.clean(reply.error) : this.http.clean(answer.text) || 'empty answer';
    if (answer.status !== 200) throw this.startFailure(`HTTP ${answer.status}: ${said}`);
    if (reply.ok !== true) throw this.startFailure(said);
    if (!nonEmpty(reply.user_id)) throw this.startFailure('the answer names no bot user');
    return reply.user_id;
  }

  private startFailure(detail: string): Error {
    return new Error(
      `The Slack receiver cannot start: auth.test failed (${detail}); check ${this.settings.where('bot_token')} and that ${this.settings.where('base_url')} reaches Slack.`,
    );
  }
}

/** Builds the Slack receiver; mount its `router` on the gateway's HTTP listener. */
export function createSlackEventsSource(options: SlackEventsSourceOptions): SlackEventsSource {
  return new SlackEventsSource(options);
}

/**
 * Keys remembered for a while, the oldest forgotten first once there are too many: the events
 * and messages already handed over.
 */
class RecentKeys {
  /** Key → when it is forgotten (ms); in the order added, which is the order of expiry. */
  private readonly keys = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly forMs: number,
    private readonly atMost: number,
  ) {}

  has(key: string): boolean {
    this.forget();
    return this.keys.has(key);
  }

  add(key: string): void {
    this.keys.delete(key);
    this.keys.set(key, this.clock.now().getTime() + this.forMs);
    this.forget();
  }

  private forget(): void {
    const now = this.clock.now().getTime();
    for (const [key, until] of this.keys) {
      if (until > now && this.keys.size <= this.atMost) return;
      this.keys.delete(key);
    }
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
