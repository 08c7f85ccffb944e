import { createHmac } from 'node:crypto';
import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { AccessTokenCache, settingsHidingToken, type IssuedToken } from './accessTokenCache.js';
import { goesToWebhook, hasAppCredentials } from './platformAddressing.js';
import { apiRoot, PlatformHttp, type PlatformAnswer } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** The custom robot webhook's answer: `errcode` 0 is the only confirmation it gives. */
interface WebhookAnswer {
  errcode?: unknown;
  errmsg?: unknown;
}

/** The open API's answers: the token, the send's `processQueryKey`, or an error's `code` and `message`. */
interface OpenApiAnswer {
  accessToken?: unknown;
  expireIn?: unknown;
  processQueryKey?: unknown;
  code?: unknown;
  message?: unknown;
}

/** The webhook's "send too fast" (20 a minute per robot, then 10 minutes' pause) and its newer code. */
const WEBHOOK_RATE_LIMITED = new Set([130101, 410100]);
/** The webhook's "token is not exist" / "access_token 不存在": the URL's token is wrong or the robot was removed. */
const WEBHOOK_TOKEN_REFUSED = new Set([300001, 400101]);
/** The webhook's refusal for a failed security setting: a missing keyword, an IP not allowed, or a bad signature. */
const WEBHOOK_SECURITY = 310000;
/** The open API's code for a missing, invalid or expired access token (it answers 401 too). */
const OPEN_API_TOKEN_REFUSED = 'InvalidAuthentication';
/** The API gateway's throttling codes. */
const OPEN_API_THROTTLED = /throttl|qpslimit|flowcontrol|ratelimit/i;

export interface DingTalkSenderOptions {
  /** Milliseconds since the epoch, for the token's expiry and the webhook signature; Date.now by default. */
  now?: () => number;
}

/**
 * DingTalk, two ways. A custom robot's `webhook_url` (https://open.dingtalk.com/document/orgapp/custom-robot-access)
 * posts `{msgtype: "text"}` to the robot's own group, signed with `secret` (HMAC-SHA256 of
 * `timestamp\nsecret`) when the robot requires it; `errcode` 0 is its confirmation. An app's
 * `client_id` and `client_secret` reach any group its robot is in through the open API
 * (`POST /v1.0/robot/groupMessages/send`, message template `sampleText`, robot `robot_code`,
 * by default the client id), with an app access token from `/v1.0/oauth2/accessToken` kept until
 * shortly before its `expireIn` and renewed once when refused; the `processQueryKey` it answers
 * with is the confirmation. Neither way takes an idempotency key.
 */
export class DingTalkSender implements PlatformSender {
  readonly platform = 'dingtalk';
  readonly partLimit = 20_000;
  private readonly now: () => number;
  private readonly tokens: AccessTokenCache;
  private readonly api: PlatformHttp;
  private readonly webhook: PlatformHttp;

  constructor(
    private readonly settings: PlatformSettings,
    options: DingTalkSenderOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.tokens = new AccessTokenCache(() => this.issueToken(), this.now);
    this.api = new PlatformHttp(settingsHidingToken(settings, this.tokens), ['client_id', 'client_secret']);
    this.webhook = new PlatformHttp(
      settingsHidingWebhookToken(settings),
      settings.get('secret') === undefined ? ['webhook_url'] : ['webhook_url', 'secret'],
    );
  }

  /**
   * With app credentials, the app access token request is the check (DingTalk has no identity
   * call a robot may make); a robot webhook alone has none: null.
   */
  async whoAmI(): Promise<string | null> {
    if (!hasAppCredentials(this.settings)) return null;
    await this.tokens.get();
    const clientId = this.settings.require('client_id');
    return `app ${clientId} (robot ${this.settings.get('robot_code') ?? clientId})`;
  }

  send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    return goesToWebhook(to.chatId, this.settings) ? this.sendToWebhook(text, idempotencyKey) : this.sendToGroup(to.chatId, text);
  }

  private async sendToWebhook(text: string, idempotencyKey: string): Promise<SentPart> {
    const answer = await this.webhook.call({ url: this.signedWebhookUrl(), json: { msgtype: 'text', text: { content: text } } });
    const reply = (isRecord(answer.json) ? answer.json : {}) as WebhookAnswer;
    const { errcode } = reply;
    if (typeof errcode !== 'number')
      throw answer.status === 200 ? this.webhook.unconfirmed(answer) : this.webhook.failure(answer, undefined);
    const said = typeof reply.errmsg === 'string' && reply.errmsg !== '' ? `${errcode}: ${reply.errmsg}` : String(errcode);
    if (answer.status !== 200) throw this.webhook.failure(answer, said);
    // The webhook gives no message id: the part's own key stands for it in the receipt.
    if (errcode === 0) return { messageId: idempotencyKey };
    const detail = this.webhook.clean(said);
    if (WEBHOOK_RATE_LIMITED.has(errcode)) throw new PlatformSendError('rate_limited', `dingtalk is rate-limiting (${detail})`);
    if (errcode === -1) throw new PlatformSendError('unavailable', `dingtalk is unavailable (${detail})`);
    if (WEBHOOK_TOKEN_REFUSED.has(errcode) || (errcode === WEBHOOK_SECURITY && /sign/i.test(detail)))
      throw this.webhook.refusedCredentials(said);
    const hint =
      errcode === WEBHOOK_SECURITY ? `; check the robot's security settings (keywords the text must contain, allowed IP addresses)` : '';
    throw new PlatformSendError('refused', `dingtalk refused the message (${detail})${hint}`);
  }

  /** The webhook URL with `timestamp` and `sign` when the robot signs: base64 HMAC-SHA256 of `timestamp\nsecret`, keyed by the secret. */
  private signedWebhookUrl(): string {
    const url = new URL(this.settings.require('webhook_url'));
    const secret = this.settings.get('secret');
    if (secret !== undefined) {
      const timestamp = String(this.now());
      url.searchParams.set('timestamp', timestamp);
      url.searchParams.set('sign', createHmac('sha256', secret).update(`${timestamp}\n${secret}`).digest('base64'));
    }
    return url.toString();
  }

  private async sendToGroup(openConversationId: string, text: string): Promise<SentPart> {
    const request = {
      url: `${this.apiRoot()}/v1.0/robot/groupMessages/send`,
      json: {
        robotCode: this.settings.get('robot_code') ?? this.settings.require('client_id'),
        openConversationId,
        msgKey: 'sampleText',
        msgParam: JSON.stringify({ content: text }),
      },
    };
    let token = await this.tokens.get();
    let answer = await this.api.call({ ...request, headers: { 'x-acs-dingtalk-access-token': token } });
    if (tokenRefused(answer)) {
      this.tokens.discard(token);
      token = await this.tokens.get();
      answer = await this.api.call({ ...request, headers: { 'x-acs-dingtalk-access-token': token } });
      if (tokenRefused(answer)) throw this.api.refusedCredentials(`HTTP ${answer.status}: ${detailOf(answer) ?? answer.text}`);
    }
    const key = (answer.json as OpenApiAnswer | undefined)?.processQueryKey;
    if (answer.status >= 200 && answer.status < 300) {
      if (typeof key === 'string' && key !== '') return { messageId: key };
      throw this.api.unconfirmed(answer);
    }
    throw this.openApiFailure(answer);
  }

  private async issueToken(): Promise<IssuedToken> {
    const answer = await this.api.call({
      url: `${this.apiRoot()}/v1.0/oauth2/accessToken`,
      json: { appKey: this.settings.require('client_id'), appSecret: this.settings.require('client_secret') },
    });
    const reply = (isRecord(answer.json) ? answer.json : {}) as OpenApiAnswer;
    if (answer.status >= 200 && answer.status < 300) {
      if (typeof reply.accessToken !== 'string' || reply.accessToken === '') {
        throw new PlatformSendError(
          'refused',
          `dingtalk answered the token request without an accessToken (${this.api.clean(answer.text) || 'empty answer'})`,
        );
      }
      return { value: reply.accessToken, expiresInSeconds: typeof reply.expireIn === 'number' ? reply.expireIn : 0 };
    }
    if (answer.status === 429 || answer.status >= 500 || OPEN_API_THROTTLED.test(String(reply.code ?? '')))
      throw this.openApiFailure(answer);
    // The request carries nothing but the client id and secret: any other refusal is about them.
    throw this.api.refusedCredentials(`HTTP ${answer.status}: ${detailOf(answer) ?? answer.text}`);
  }

  private openApiFailure(answer: PlatformAnswer): PlatformSendError {
    const detail = detailOf(answer);
    if (answer.status !== 429 && OPEN_API_THROTTLED.test(String((answer.json as OpenApiAnswer | undefined)?.code ?? ''))) {
      return new PlatformSendError('rate_limited', `dingtalk is rate-limiting (${this.api.clean(`HTTP ${answer.status}: ${detail}`)})`);
    }
    return this.api.failure(answer, detail);
  }

  private apiRoot(): string {
    return apiRoot(this.settings.require('base_url'));
  }
}

function tokenRefused(answer: PlatformAnswer): boolean {
  return answer.status === 401 || (answer.json as OpenApiAnswer | undefined)?.code === OPEN_API_TOKEN_REFUSED;
}

/** `code: message` from an open API error. */
function detailOf(answer: PlatformAnswer): string | undefined {
  const reply = (isRecord(answer.json) ? answer.json : {}) as OpenApiAnswer;
  if (typeof reply.code !== 'string') return undefined;
  return typeof reply.message === 'string' && reply.message !== '' ? `${reply.code}: ${reply.message}` : reply.code;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The settings with the webhook's own `access_token` counted among the secrets, should an error quote it alone. */
function settingsHidingWebhookToken(settings: PlatformSettings): PlatformSettings {
  const webhookUrl = settings.get('webhook_url');
  let token: string | null;
  try {
    token = webhookUrl === undefined ? null : new URL(webhookUrl).searchParams.get('access_token');
  } catch {
    token = null;
  }
  if (token === null || token.length < 4) return settings;
  return Object.create(settings, { secrets: { value: [...settings.secrets, token] } }) as PlatformSettings;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new DingTalkSender(settings);
}
