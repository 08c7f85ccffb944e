import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import {
  apiRoot,
  CREDENTIALS_CHECK,
  PlatformHttp,
  refusedSubject,
  retryAfterMs,
  type PlatformAnswer,
  type RequestPurpose,
} from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';
import { whatsAppRecipient } from './platformAddressing.js';

/** A Graph API error body, as every Cloud API error comes (https://developers.facebook.com/docs/graph-api/guides/error-handling). */
interface GraphError {
  message?: unknown;
  code?: unknown;
  error_subcode?: unknown;
  error_data?: { details?: unknown } | null;
  is_transient?: unknown;
}

interface SendAnswer {
  messages?: Array<{ id?: unknown }>;
  error?: GraphError;
}

/**
 * Meta's throttling codes, which come as HTTP 400 (4 as 429): the app's call limit (4), the
 * business account's (80007), the number's throughput (130429) and the pair rate to one person
 * (131056). Spam limits (131048) are not here: waiting seconds does not lift them.
 */
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131056]);
const PAIR_RATE_LIMIT = 131056;
/** Meta paces messages to one person at about one every 6 seconds, and gives no Retry-After. */
const PAIR_RATE_WAIT_SECONDS = 6;
/** "API Service", "Service unavailable", "Server temporarily unavailable". */
const TRANSIENT_CODES = new Set([2, 131016, 133004]);
/** AuthException and "Access token has expired" (HTTP 401). */
const CREDENTIAL_CODES = new Set([0, 190]);
/** The business phone number id is unknown or deleted: code 100 with subcode 33, or code 33. */
const UNKNOWN_OBJECT_SUBCODE = 33;
/** The permission errors: 10 and 200–299 (HTTP 403). */
const isPermissionCode = (code: number) => code === 10 || (code >= 200 && code <= 299);

/** What to do about the refusals people meet most; Meta's own words come first. */
const HINTS: Record<number, string> = {
  131030: 'a test number sends only to the recipients listed under WhatsApp → API Setup in the Meta app',
  131047:
    'more than 24 hours have passed since this person last wrote to the business number, and WhatsApp then takes only template messages',
  131026: 'the number may not use WhatsApp, or its app may need an update',
  133010: 'the business phone number is not registered with the Cloud API',
};

/**
 * WhatsApp Business Platform Cloud API, send a text message
 * (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages): `POST
 * {base_url}/{phone_number_id}/messages` with the access token as a bearer. The message id Meta
 * answers with (`messages[0].id`, a `wamid.…`) is the confirmation: the message is accepted by
 * the Cloud API, which is as far as its answer goes; later failures (a person outside the 24-hour
 * window, for one) come only through Meta's webhooks. Meta decides by error `code`, not by HTTP
 * status, so this adapter does too: its rate limits arrive as HTTP 400. The Cloud API has no
 * client message key, so a retry after a lost answer can post twice.
 */
export class WhatsAppSender implements PlatformSender {
  readonly platform = 'whatsapp';
  readonly partLimit = 4000;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['access_token']);
  }

  async send(to: ChatAddress, text: string): Promise<SentPart> {
    const recipient = whatsAppRecipient(to);
    if ('problem' in recipient) throw new PlatformSendError('refused', `whatsapp cannot deliver to "${to.chatId}": ${recipient.problem}`);
    const phoneNumberId = this.settings.require('phone_number_id');
    const answer = await this.http.call({
      url: `${apiRoot(this.settings.require('base_url'))}/${encodeURIComponent(phoneNumberId)}/messages`,
      headers: { authorization: `Bearer ${this.settings.require('access_token')}` },
      json: { messaging_product: 'whatsapp', recipient_type: 'individual', to: recipient.to, type: 'text', text: { body: text } },
    });
    const reply = (isRecord(answer.json) ? answer.json : {}) as SendAnswer;
    if (answer.status < 200 || answer.status >= 300 || isRecord(reply.error)) throw this.failure(answer, reply.error ?? {});
    const messageId = reply.messages?.[0]?.id;
    if (typeof messageId === 'string' && messageId !== '') return { messageId };
    throw this.http.unconfirmed(answer);
  }

  /**
   * `GET {base_url}/{phone_number_id}?fields=display_phone_number,verified_name`
   * (the Cloud API phone number node,
   * https://developers.facebook.com/docs/whatsapp/cloud-api/reference/phone-numbers):
   * the business number and the name WhatsApp shows for it.
   */
  async whoAmI(): Promise<string> {
    const phoneNumberId = this.settings.require('phone_number_id');
    const answer = await this.http.call({
      url: `${apiRoot(this.settings.require('base_url'))}/${encodeURIComponent(phoneNumberId)}?fields=display_phone_number,verified_name`,
      headers: { authorization: `Bearer ${this.settings.require('access_token')}` },
    });
    const reply = (isRecord(answer.json) ? answer.json : {}) as {
      display_phone_number?: unknown;
      verified_name?: unknown;
      error?: GraphError;
    };
    if (answer.status < 200 || answer.status >= 300 || isRecord(reply.error)) throw this.failure(answer, reply.error ?? {}, 'check');
    const number =
      typeof reply.display_phone_number === 'string' && reply.display_phone_number !== '' ? reply.display_phone_number : undefined;
    const name = typeof reply.verified_name === 'string' && reply.verified_name !== '' ? reply.verified_name : undefined;
    if (number === undefined && name === undefined) throw this.http.unconfirmed(answer, 'check');
    return name && number ? `${name} (${number})` : (name ?? number)!;
  }

  private failure(answer: PlatformAnswer, error: GraphError, purpose: RequestPurpose = 'send'): PlatformSendError {
    const code = typeof error.code === 'number' ? error.code : null;
    const said = describe(error);
    const detail = this.http.clean(said ?? answer.text);
    const status = detail ? `HTTP ${answer.status}: ${detail}` : `HTTP ${answer.status}`;
    if (answer.status === 429 || (code !== null && RATE_LIMIT_CODES.has(code))) {
      const hint = code === PAIR_RATE_LIMIT ? PAIR_RATE_WAIT_SECONDS * 1000 : retryAfterMs(answer.headers);
      return new PlatformSendError('rate_limited', `whatsapp is rate-limiting (${status})`, hint);
    }
    if (answer.status === 401 || (code !== null && CREDENTIAL_CODES.has(code))) return this.http.refusedCredentials(status);
    if (code === UNKNOWN_OBJECT_SUBCODE || (code === 100 && error.error_subcode === UNKNOWN_OBJECT_SUBCODE)) {
      return new PlatformSendError(
        'refused',
        `whatsapp refused ${refusedSubject(purpose)} (${status}); check ${this.settings.where('phone_number_id')}`,
      );
    }
    if (code !== null && isPermissionCode(code)) {
      return new PlatformSendError(
        'refused',
        `whatsapp refused access (${status}); the access token needs the whatsapp_business_messaging permission for this phone number`,
      );
    }
    if (answer.status >= 500 || error.is_transient === true || (code !== null && TRANSIENT_CODES.has(code))) {
      return new PlatformSendError('unavailable', `whatsapp is unavailable (${status})`);
    }
    if (purpose === 'check') {
      // The hints are about recipients and sends, which a credentials check has neither of.
      return new PlatformSendError(
        'refused',
        `whatsapp refused ${CREDENTIALS_CHECK} (${status}); check ${this.settings.where('access_token')} and ${this.settings.where('phone_number_id')}`,
      );
    }
    const hint = code !== null ? HINTS[code] : undefined;
    return new PlatformSendError('refused', `whatsapp refused the message (${status})${hint ? `; ${hint}` : ''}`);
  }
}

/**
 * Meta's message, which carries the code and a title (`(#131030) Recipient phone number not in
 * allowed list`), and its `details` where they add to it; details that repeat the title replace it.
 */
function describe(error: GraphError): string | undefined {
  const message = typeof error.message === 'string' && error.message !== '' ? error.message : undefined;
  const details = typeof error.error_data?.details === 'string' && error.error_data.details !== '' ? error.error_data.details : undefined;
  if (message === undefined || details === undefined) return message ?? details;
  const title = message.replace(/^\(#\d+\)\s*/, '');
  if (details.startsWith(title)) return `${message.slice(0, message.length - title.length)}${details}`;
  return message.includes(details) ? message : `${message}: ${details}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new WhatsAppSender(settings);
}
