import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { blueBubblesAddressProblem, chatGuidOf } from './platformAddressing.js';
import { apiRoot, PlatformHttp, type PlatformAnswer } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';
import { plainTextOf } from './TwilioSmsSender.js';

/** Every BlueBubbles answer: `{status, message, data?, error?: {type, message}}`. */
interface BlueBubblesAnswer {
  status?: number;
  message?: string;
  error?: { type?: string; message?: string };
  data?: { guid?: unknown; error?: unknown } | null;
}

/** The error type BlueBubbles gives when Messages failed to send, or did not confirm within its 2 minutes. */
const IMESSAGE_ERROR = 'iMessage Error';
/** BlueBubbles' answer while a request with the same tempGuid is still being sent. */
const ALREADY_QUEUED = /already queued/i;
const SEND_METHODS = ['apple-script', 'private-api'];

/**
 * A BlueBubbles server on a Mac (https://bluebubbles.app) sending iMessages through its REST API:
 * `POST {url}/api/v1/message/text?password=…` with `{chatGuid, tempGuid, message}`
 * (https://github.com/BlueBubblesApp/bluebubbles-server, messageRouter/messageValidator). The
 * server answers only once Messages has the message in its database, with its `guid`; that guid
 * is the confirmation. The password has to travel in the query string, so every error text is
 * cleared of it in both its plain and its URL-encoded form.
 */
export class BlueBubblesSender implements PlatformSender {
  readonly platform = 'bluebubbles';
  readonly partLimit = 4000;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['password']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    try {
      return await this.post(to, text, idempotencyKey);
    } catch (error) {
      if (!(error instanceof PlatformSendError)) throw error;
      // Rebuilt without `cause`: a fetch error's cause can hold the whole URL, password included.
      throw new PlatformSendError(error.kind, this.withoutPassword(error.message), error.retryAfterMs);
    }
  }

  /**
   * `GET {url}/api/v1/server/info?password=…` (bluebubbles-server's serverRouter): the iMessage
   * account the server's Mac is signed in with, and the server's version.
   */
  async whoAmI(): Promise<string> {
    try {
      const answer = await this.http.call({ url: this.apiUrl('server/info') });
      const reply = (isRecord(answer.json) ? answer.json : {}) as BlueBubblesAnswer & {
        data?: { detected_imessage?: unknown; computer_id?: unknown; server_version?: unknown } | null;
      };
      if (answer.status !== 200) throw this.http.failure(answer, saidBy(reply), undefined, 'check');
      const { detected_imessage: account, computer_id: computer, server_version: version } = reply.data ?? {};
      const who = [account, computer].find((value): value is string => typeof value === 'string' && value !== '');
      if (reply.status !== 200 || who === undefined) throw this.http.unconfirmed(answer, 'check');
      return typeof version === 'string' && version !== '' ? `${who} (BlueBubbles ${version})` : who;
    } catch (error) {
      if (!(error instanceof PlatformSendError)) throw error;
      throw new PlatformSendError(error.kind, this.withoutPassword(error.message), error.retryAfterMs);
    }
  }

  private async post(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const problem = blueBubblesAddressProblem(to);
    if (problem !== null) throw new PlatformSendError('refused', problem);
    const body: Record<string, unknown> = {
      chatGuid: chatGuidOf(to.chatId),
      // The same tempGuid on every attempt at a part: BlueBubbles refuses a second request with a
      // tempGuid it is still sending, instead of sending the text twice.
      tempGuid: `agent-${idempotencyKey}`,
      // iMessage shows Markdown as typed: asterisks, backticks and fences.
      message: plainTextOf(text),
    };
    const method = this.settings.get('method');
    if (method !== undefined) body.method = method;
    const answer = await this.http.call({ url: this.sendUrl(method), json: body });
    const reply = (isRecord(answer.json) ? answer.json : {}) as BlueBubblesAnswer;
    if (answer.status !== 200) throw this.failure(answer, reply, String(body.tempGuid));
    const guid = reply.data?.guid;
    if (reply.status !== 200 || typeof guid !== 'string' || guid === '') throw this.http.unconfirmed(answer);
    if (typeof reply.data?.error === 'number' && reply.data.error !== 0) {
      throw new PlatformSendError('refused', `bluebubbles refused the message (Messages reported error ${reply.data.error} for ${guid})`);
    }
    return { messageId: guid };
  }

  private sendUrl(method: string | undefined): string {
    if (method !== undefined && !SEND_METHODS.includes(method)) {
      throw new PlatformSendError(
        'refused',
        `bluebubbles cannot send with method "${method}"; set ${this.settings.where('method')} to apple-script or private-api, or leave it out`,
      );
    }
    return this.apiUrl('message/text');
  }

  /** `{url}/api/v1/{path}?password=…`; a `url` pasted with the `/api/v1` suffix works as well. */
  private apiUrl(path: string): string {
    const root = apiRoot(this.settings.require('url')).replace(/\/api\/v1$/, '');
    if (!isHttpUrl(root)) {
      throw new PlatformSendError(
        'refused',
        `bluebubbles cannot be reached at "${root}"; set ${this.settings.where('url')} to the server's address, e.g. http://192.168.1.20:1234`,
      );
    }
    return `${root}/api/v1/${path}?${new URLSearchParams({ password: this.settings.require('password') })}`;
  }

  private failure(answer: PlatformAnswer, reply: BlueBubblesAnswer, tempGuid: string): PlatformSendError {
    const said = saidBy(reply);
    if (reply.error?.type === IMESSAGE_ERROR) {
      // Messages itself failed or did not confirm in time: the text may have gone out, and a retry
      // could send it twice, so it is not retried.
      return new PlatformSendError(
        'refused',
        `bluebubbles could not confirm the message was sent (${this.http.clean(`HTTP ${answer.status}: ${said ?? answer.text}`)}); check the Messages app on the server`,
      );
    }
    if (answer.status === 400 && ALREADY_QUEUED.test(reply.error?.message ?? '')) {
      return new PlatformSendError(
        'refused',
        `bluebubbles is still sending an earlier attempt of this part (tempGuid ${tempGuid}); it was not sent again and may still arrive`,
      );
    }
    return this.http.failure(answer, said);
  }

  /** The password as typed and as a query string carries it, wherever a proxy or the server echoed it. */
  private withoutPassword(text: string): string {
    const password = this.settings.get('password');
    if (password === undefined || password === '') return text;
    const forms = new Set([password, encodeURIComponent(password), new URLSearchParams({ p: password }).toString().slice(2)]);
    let cleaned = text;
    for (const form of forms) cleaned = cleaned.split(form).join('***');
    return cleaned;
  }
}

function saidBy(reply: BlueBubblesAnswer): string | undefined {
  const parts = [reply.message, reply.error?.message].filter((part): part is string => typeof part === 'string' && part !== '');
  const code = reply.data?.error;
  if (typeof code === 'number' && code !== 0) parts.push(`error ${code}`);
  return parts.length > 0 ? parts.join(': ') : undefined;
}

function isHttpUrl(text: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new BlueBubblesSender(settings);
}
