import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { apiRoot, PlatformHttp, type PlatformAnswer, type RequestPurpose } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** Twilio's answer: the Message resource on success, `{code, message, more_info, status}` on an error. */
interface TwilioAnswer {
  sid?: string;
  status?: string;
  error_code?: number | null;
  error_message?: string | null;
  code?: number;
  message?: string;
  more_info?: string;
}

/** Twilio's "Authenticate" error: the account SID and auth token do not belong together. */
const AUTHENTICATION_FAILED = 20003;
/** A Message SID (SM… for SMS, MM… when Twilio made it an MMS). */
const MESSAGE_SID = /^(SM|MM)[0-9a-f]{32}$/i;
const FAILED_ON_CREATE = new Set(['failed', 'undelivered', 'canceled']);

/**
 * Twilio Programmable Messaging, "Create a Message resource"
 * (https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource). The
 * message SID Twilio answers with is the confirmation: the message is queued at Twilio, which is as
 * far as the API can confirm. SMS shows Markdown as literal asterisks and backticks, so it is
 * reduced to plain text first. A `from` that is a Messaging Service SID (MG…) lets the service pick
 * the sender number.
 */
export class TwilioSmsSender implements PlatformSender {
  readonly platform = 'sms';
  readonly partLimit = 1600;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['account_sid', 'auth_token']);
  }

  async send(to: ChatAddress, text: string): Promise<SentPart> {
    const accountSid = this.settings.require('account_sid');
    const from = this.settings.require('from');
    const form: Record<string, string> = { To: to.chatId, Body: plainTextOf(text) };
    if (from.startsWith('MG')) form.MessagingServiceSid = from;
    else form.From = from;
    const answer = await this.http.call({
      url: `${apiRoot(this.settings.require('base_url'))}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`,
      headers: { authorization: this.basicAuthorization() },
      form,
    });
    const reply = (answer.json ?? {}) as TwilioAnswer;
    if (answer.status >= 200 && answer.status < 300) {
      if (typeof reply.sid !== 'string' || !MESSAGE_SID.test(reply.sid)) throw this.http.unconfirmed(answer);
      if (reply.status !== undefined && FAILED_ON_CREATE.has(reply.status)) {
        const why = reply.error_message ?? `error ${reply.error_code ?? 'unknown'}`;
        throw new PlatformSendError(
          'refused',
          `${this.platform} refused the message (Twilio marked ${reply.sid} ${reply.status}: ${this.http.clean(why)})`,
        );
      }
      return { messageId: reply.sid };
    }
    throw this.failure(answer, reply);
  }

  /**
   * "Fetch an Account resource" (https://www.twilio.com/docs/iam/api/account#fetch-an-account-resource):
   * `GET /2010-04-01/Accounts/{AccountSid}.json`, the account's friendly name.
   */
  async whoAmI(): Promise<string> {
    const accountSid = this.settings.require('account_sid');
    const answer = await this.http.call({
      url: `${apiRoot(this.settings.require('base_url'))}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}.json`,
      headers: { authorization: this.basicAuthorization() },
    });
    const reply = (answer.json ?? {}) as TwilioAnswer & { friendly_name?: unknown };
    if (answer.status < 200 || answer.status >= 300) throw this.failure(answer, reply, 'check');
    const name = typeof reply.friendly_name === 'string' && reply.friendly_name !== '' ? reply.friendly_name : undefined;
    if (reply.sid !== accountSid && name === undefined) throw this.http.unconfirmed(answer, 'check');
    return name ? `${name} (${accountSid})` : accountSid;
  }

  private basicAuthorization(): string {
    return `Basic ${Buffer.from(`${this.settings.require('account_sid')}:${this.settings.require('auth_token')}`).toString('base64')}`;
  }

  private failure(answer: PlatformAnswer, reply: TwilioAnswer, purpose: RequestPurpose = 'send'): PlatformSendError {
    const detail =
      typeof reply.message === 'string'
        ? `error ${reply.code ?? '?'}: ${reply.message}${reply.more_info ? ` (${reply.more_info})` : ''}`
        : undefined;
    if (reply.code === AUTHENTICATION_FAILED) return this.http.refusedCredentials(`HTTP ${answer.status}: ${detail ?? answer.text}`);
    return this.http.failure(answer, detail, undefined, purpose);
  }
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new TwilioSmsSender(settings);
}

const PART_ENDING = / \(\d+\/\d+\)$/;
const FENCE = /^\s{0,3}(`{3,}|~{3,})(.*)$/;

/**
 * The text as an SMS shows it: code blocks keep their content without the fences; emphasis,
 * inline code and heading marks go; a link becomes `text (url)`. Never longer than the input, so a
 * part stays within the limit, and the ` (i/N)` ending the delivery path appended stays as it is.
 */
export function plainTextOf(text: string): string {
  const ending = PART_ENDING.exec(text)?.[0] ?? '';
  const body = text.slice(0, text.length - ending.length);
  const lines: string[] = [];
  let openFence: string | null = null;
  for (const line of body.split('\n')) {
    const fence = FENCE.exec(line);
    if (fence && openFence === null) {
      openFence = fence[1]!;
      continue;
    }
    if (fence && fence[1]![0] === openFence![0] && fence[1]!.length >= openFence!.length && fence[2]!.trim() === '') {
      openFence = null;
      continue;
    }
    lines.push(openFence !== null ? line : plainLine(line));
  }
  const plain = lines.join('\n').trimEnd();
  return plain === '' ? text : plain + ending;
}

function plainLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
  const content = heading ? heading[1]! : line;
  // Inline code is kept verbatim: what is between backticks is not Markdown.
  return content
    .split(/(`+)([^`]|[^`].*?[^`])\1(?!`)/)
    .map((piece, index) => (index % 3 === 2 ? piece : index % 3 === 1 ? '' : plainInline(piece)))
    .join('');
}

function plainInline(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g, (_, label: string, url: string) =>
      label === '' || label === url ? url : `${label} (${url})`,
    )
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '$1')
    .replace(/(^|[^\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])/g, '$1$2');
}
