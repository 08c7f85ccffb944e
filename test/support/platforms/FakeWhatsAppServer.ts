import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const WHATSAPP_PHONE_NUMBER_ID = '106540352242922';
export const WHATSAPP_ACCESS_TOKEN = 'EAAGm0PX4ZCpsBAtestwhatsapptoken';
export const WHATSAPP_API_VERSION = 'v26.0';
/** A number Meta refuses as a test number's recipient (131030) and one that is not on WhatsApp (131026). */
export const NOT_ALLOWED = '15550009999';
export const NOT_ON_WHATSAPP = '15550000404';

const MESSAGES_PATH = /^\/(v\d+\.\d+)\/([^/]+)\/messages$/;

/** A Graph API error, in the shape every Cloud API error comes. */
export function graphError(
  status: number,
  code: number,
  message: string,
  details?: string,
  extra: Record<string, unknown> = {},
): FakeAnswer {
  const error: Record<string, unknown> = { message, type: 'OAuthException', code, fbtrace_id: 'AazKx2T0m8Q4fakeTrace', ...extra };
  if (details !== undefined) error.error_data = { messaging_product: 'whatsapp', details };
  return { status, json: { error } };
}

/**
 * The WhatsApp Cloud API's send endpoint as
 * https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages describes it:
 * `POST /{version}/{phone_number_id}/messages` with `Authorization: Bearer <token>`, a JSON text
 * message answered with `{messaging_product, contacts, messages: [{id: "wamid.…"}]}`, and Graph
 * API errors `{error: {message, type, code, error_data: {details}, fbtrace_id}}` whose `code`
 * says what happened; its rate limits come as HTTP 400 with no Retry-After.
 */
export class FakeWhatsAppServer extends HttpFakePlatform {
  readonly platform = 'whatsapp';
  readonly target = 'whatsapp:+14155550123';
  override readonly rateLimitHint = false;
  /** Replaces the next confirmation, to try answers the Cloud API should never give. */
  oddConfirmation: FakeAnswer | null = null;

  get settings(): Record<string, string> {
    return {
      phone_number_id: WHATSAPP_PHONE_NUMBER_ID,
      access_token: WHATSAPP_ACCESS_TOKEN,
      base_url: `${this.url}/${WHATSAPP_API_VERSION}`,
      home_channel: '+14155550100',
    };
  }

  static start(): Promise<FakeWhatsAppServer> {
    return new FakeWhatsAppServer().start();
  }

  /** `refused`: the phone number id is unknown to the token (code 100, subcode 33); `anonymous`: the node without its number or name. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === `/${WHATSAPP_API_VERSION}/${WHATSAPP_PHONE_NUMBER_ID}`,
      oddity === 'refused'
        ? graphError(
            400,
            100,
            `Unsupported get request. Object with ID '${WHATSAPP_PHONE_NUMBER_ID}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
            undefined,
            { error_subcode: 33 },
          )
        : { status: 200, json: { id: WHATSAPP_PHONE_NUMBER_ID, quality_rating: 'GREEN' } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    if (request.method !== 'POST' || !MESSAGES_PATH.test(request.path)) return null;
    return String(request.body?.text?.body ?? '');
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const refusal = this.refusalOf(request);
    if (refusal) return { ...refusal, accepted: false };
    if (this.oddConfirmation) {
      const odd = this.oddConfirmation;
      this.oddConfirmation = null;
      return { ...odd, accepted: false };
    }
    const to = String(request.body.to);
    const wamid = `wamid.HBgLMTQxNTU1NTAxMjMVAgARGBI${messageId.padStart(6, '0')}AA==`;
    return { status: 200, json: { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: wamid }] } };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return graphError(
          400,
          130429,
          '(#130429) Rate limit hit',
          'Message failed to send because there were too many messages sent from this phone number in a short period of time',
        );
      case 'unavailable':
        return graphError(500, 131000, '(#131000) Something went wrong', 'Something went wrong', { is_transient: true });
      case 'refused':
        return graphError(
          400,
          131030,
          '(#131030) Recipient phone number not in allowed list',
          'Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.',
        );
      case 'unauthorized':
        return graphError(401, 190, 'Error validating access token: Session has expired on Tuesday, 10-Nov-26 09:00:00 PST.', undefined, {
          error_subcode: 463,
        });
    }
  }

  /** `GET /{version}/{phone_number_id}`: the business number's display number and verified name. */
  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method === 'GET' && request.path === `/${WHATSAPP_API_VERSION}/${WHATSAPP_PHONE_NUMBER_ID}`) {
      if (request.headers.authorization !== `Bearer ${WHATSAPP_ACCESS_TOKEN}`)
        return graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token');
      return {
        status: 200,
        json: {
          verified_name: 'Acme Support',
          display_phone_number: '+1 415-555-0100',
          quality_rating: 'GREEN',
          id: WHATSAPP_PHONE_NUMBER_ID,
        },
      };
    }
    return graphError(
      400,
      100,
      `Unsupported ${request.method.toLowerCase()} request. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    );
  }

  /** The Cloud API's answer to a send it would not accept; null for one it takes. */
  private refusalOf(request: RecordedRequest): FakeAnswer | null {
    const [, , phoneNumberId] = MESSAGES_PATH.exec(request.path)!;
    if (request.headers.authorization !== `Bearer ${WHATSAPP_ACCESS_TOKEN}`) {
      return graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token');
    }
    if (phoneNumberId !== WHATSAPP_PHONE_NUMBER_ID) {
      return graphError(
        400,
        100,
        `Unsupported post request. Object with ID '${phoneNumberId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        undefined,
        { error_subcode: 33 },
      );
    }
    const body = String(request.headers['content-type'] ?? '').startsWith('application/json') ? request.body : undefined;
    if (body?.messaging_product !== 'whatsapp') {
      return graphError(400, 100, '(#100) The parameter messaging_product is required.');
    }
    if (body.type !== 'text' || typeof body.text?.body !== 'string' || body.text.body === '') {
      return graphError(400, 131008, '(#131008) Required parameter is missing', 'text.body is required for a text message');
    }
    if (body.text.body.length > 4096) {
      return graphError(400, 100, "(#100) Param text['body'] must be at most 4096 characters long.");
    }
    if (typeof body.to !== 'string' || !/^\+?[1-9]\d{6,14}$/.test(body.to)) {
      return graphError(400, 131009, '(#131009) Parameter value is not valid', 'Recipient phone number is not valid');
    }
    if (body.to === NOT_ALLOWED) {
      return graphError(
        400,
        131030,
        '(#131030) Recipient phone number not in allowed list',
        'Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.',
      );
    }
    if (body.to === NOT_ON_WHATSAPP) {
      return graphError(
        400,
        131026,
        '(#131026) Message Undeliverable',
        'Message failed to send because the recipient is not a WhatsApp user',
      );
    }
    return null;
  }
}
