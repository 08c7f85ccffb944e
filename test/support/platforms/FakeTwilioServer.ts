import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const TWILIO_ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
export const TWILIO_AUTH_TOKEN = 'f00dfeedcafe0123456789abcdef0123';
export const TWILIO_FROM = '+15005550006';
export const TWILIO_MESSAGING_SERVICE_SID = 'MG00112233445566778899aabbccddeeff';
/** Twilio's test numbers that it refuses as a recipient: not a mobile, and opted out (STOP). */
export const NOT_A_MOBILE = '+15005550009';
export const UNSUBSCRIBED = '+15005550004';

const E164 = /^\+[1-9]\d{6,14}$/;
const MESSAGES_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/;

/** Twilio's error body, as every REST error comes: `{code, message, more_info, status}`. */
function twilioError(status: number, code: number, message: string, headers?: Record<string, string>): FakeAnswer {
  return { status, headers, json: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status } };
}

/**
 * Twilio's Messages resource as https://www.twilio.com/docs/messaging/api/message-resource
 * describes it: `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded, HTTP Basic
 * `AccountSid:AuthToken`. A request with the wrong credentials, account, or fields is answered
 * with Twilio's error and is neither a send nor delivered.
 */
export class FakeTwilioServer extends HttpFakePlatform {
  readonly platform = 'sms';
  readonly target = 'sms:+14155550123';
  /** Whether a 429 carries `Retry-After`; Twilio does not promise one. */
  retryAfterHeader = true;
  /** Replaces the next confirmation, to try answers Twilio should never give. */
  oddConfirmation: FakeAnswer | null = null;

  get settings(): Record<string, string> {
    return {
      account_sid: TWILIO_ACCOUNT_SID,
      auth_token: TWILIO_AUTH_TOKEN,
      from: TWILIO_FROM,
      base_url: this.url,
      home_channel: '+14155550100',
    };
  }

  static start(): Promise<FakeTwilioServer> {
    return new FakeTwilioServer().start();
  }

  /** `refused`: Twilio's 404 for the account; `anonymous`: an account with neither its SID nor a friendly name. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    const path = `/2010-04-01/Accounts/${TWILIO_ACCOUNT_SID}.json`;
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === path,
      oddity === 'refused'
        ? twilioError(404, 20404, `The requested resource ${path} was not found`)
        : { status: 200, json: { status: 'active', type: 'Full' } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    return this.problemWith(request) === null ? String(request.body.Body) : null;
  }

  /** `GET /2010-04-01/Accounts/{AccountSid}.json`: the account, for these credentials only. */
  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method === 'GET' && request.path === `/2010-04-01/Accounts/${TWILIO_ACCOUNT_SID}.json`) {
      const expected = `Basic ${Buffer.from(`${TWILIO_ACCOUNT_SID}:${TWILIO_AUTH_TOKEN}`).toString('base64')}`;
      if (request.headers.authorization !== expected) return twilioError(401, 20003, 'Authenticate');
      return { status: 200, json: { sid: TWILIO_ACCOUNT_SID, friendly_name: 'Acme alerts', status: 'active', type: 'Full' } };
    }
    return this.problemWith(request) ?? twilioError(404, 20404, `The requested resource ${request.path} was not found`);
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    if (this.oddConfirmation) {
      const odd = this.oddConfirmation;
      this.oddConfirmation = null;
      return odd;
    }
    const form = request.body as Record<string, string>;
    const viaService = form.MessagingServiceSid !== undefined;
    const sid = `SM${messageId.padStart(32, '0')}`;
    return {
      status: 201,
      json: {
        sid,
        account_sid: TWILIO_ACCOUNT_SID,
        api_version: '2010-04-01',
        body: form.Body,
        direction: 'outbound-api',
        error_code: null,
        error_message: null,
        from: viaService ? null : form.From,
        messaging_service_sid: viaService ? form.MessagingServiceSid : null,
        num_segments: viaService ? '0' : '1',
        status: viaService ? 'accepted' : 'queued',
        to: form.To,
        uri: `/2010-04-01/Accounts/${TWILIO_ACCOUNT_SID}/Messages/${sid}.json`,
      },
    };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return twilioError(429, 20429, 'Too Many Requests', this.retryAfterHeader ? { 'retry-after': String(retryAfter) } : undefined);
      case 'unavailable':
        return twilioError(500, 20500, 'An internal server error has occurred');
      case 'refused':
        return twilioError(400, 21211, "The 'To' number +14155550123 is not a valid phone number.");
      case 'unauthorized':
        return twilioError(401, 20003, 'Authenticate');
    }
  }

  /** Twilio's answer to a Messages request it would not accept; null for one it takes. */
  private problemWith(request: RecordedRequest): FakeAnswer | null {
    const account = MESSAGES_PATH.exec(request.path)?.[1];
    if (request.method !== 'POST' || account === undefined)
      return twilioError(404, 20404, `The requested resource ${request.path} was not found`);
    const expected = `Basic ${Buffer.from(`${TWILIO_ACCOUNT_SID}:${TWILIO_AUTH_TOKEN}`).toString('base64')}`;
    if (request.headers.authorization !== expected || account !== TWILIO_ACCOUNT_SID) return twilioError(401, 20003, 'Authenticate');
    const form = (request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ? request.body : undefined) as
      Record<string, string> | undefined;
    if (!form?.To) return twilioError(400, 21604, "A 'To' phone number is required.");
    if (!E164.test(form.To)) return twilioError(400, 21211, `The 'To' number ${form.To} is not a valid phone number.`);
    if (form.MessagingServiceSid !== undefined) {
      if (form.MessagingServiceSid !== TWILIO_MESSAGING_SERVICE_SID)
        return twilioError(400, 21701, `The Messaging Service Sid ${form.MessagingServiceSid} is invalid.`);
    } else if (!form.From) {
      return twilioError(400, 21603, "A 'From' phone number is required.");
    } else if (form.From !== TWILIO_FROM) {
      return twilioError(
        400,
        21606,
        `The From phone number ${form.From} is not a valid, SMS-capable inbound phone number or short code for your account.`,
      );
    }
    if (!form.Body) return twilioError(400, 21602, 'Message body is required.');
    if (form.To === NOT_A_MOBILE) return twilioError(400, 21614, `To number: ${form.To}, is not a mobile number`);
    if (form.To === UNSUBSCRIBED) return twilioError(400, 21610, 'Attempt to send to unsubscribed recipient');
    return null;
  }
}
