import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

/** With characters that a query string encodes, so that both forms of it can be looked for. */
export const BLUEBUBBLES_PASSWORD = 'hunter2 & friends/+=';
export const BLUEBUBBLES_HOME = 'iMessage;+;chat123456789012345678';
export const BLUEBUBBLES_CONTACT = '+14155550123';

const SEND = '/api/v1/message/text';
const DIRECT = /^[A-Za-z]+;-;(.+)$/;

/**
 * A BlueBubbles server's REST API v1 as bluebubbles-server's messageRouter, messageValidator and
 * responses describe it: `POST /api/v1/message/text?password=…` (the password is also accepted as
 * `guid` or `token`) with a JSON body `{chatGuid, tempGuid, message, method?}`; every answer is
 * `{status, message, data?, error?: {type, message}}`, a sent message `{status: 200, message:
 * "Message sent!", data: {guid, tempGuid, text, …}}`. AppleScript sends need a tempGuid, and one
 * still being sent is refused (400) when it comes again.
 */
export class FakeBlueBubblesServer extends HttpFakePlatform {
  readonly platform = 'bluebubbles';
  readonly target = `bluebubbles:${BLUEBUBBLES_CONTACT}`;
  /** The chats Messages has; a direct chat with a known address is opened when first sent to. */
  readonly chats = new Set([BLUEBUBBLES_HOME, `iMessage;-;${BLUEBUBBLES_CONTACT}`]);
  /** Addresses registered with iMessage. */
  readonly addresses = new Set([BLUEBUBBLES_CONTACT, '+14155550199', 'alice@example.com']);
  private readonly scriptedAnswers: FakeAnswer[] = [];

  get settings(): Record<string, string> {
    return { url: this.url, password: BLUEBUBBLES_PASSWORD, home_channel: BLUEBUBBLES_HOME };
  }

  static start(): Promise<FakeBlueBubblesServer> {
    return new FakeBlueBubblesServer().start();
  }

  /** Answers the next well-formed send with `answer` instead of confirming it. */
  answerNextSendWith(answer: FakeAnswer): void {
    this.scriptedAnswers.push(answer);
  }

  /** `refused`: a 400 to `server/info`; `anonymous`: another web page answering 200 at that address. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === '/api/v1/server/info',
      oddity === 'refused'
        ? badRequest('Unsupported API version')
        : { status: 200, text: '<!doctype html><html><head><title>Router</title></head></html>' },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    return request.method === 'POST' && request.path === SEND ? String(request.body?.message ?? '') : null;
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    const refusal = this.refusalOf(request);
    if (refusal) return { ...refusal, accepted: false };
    const scripted = this.scriptedAnswers.shift();
    if (scripted) return { accepted: false, ...scripted };
    const { chatGuid, tempGuid, message } = request.body as { chatGuid: string; tempGuid?: string; message: string };
    this.chats.add(chatGuid);
    const guid = `p:0/5F0C7A2E-0000-4000-8000-${messageId.padStart(12, '0')}`;
    return {
      status: 200,
      json: {
        status: 200,
        message: 'Message sent!',
        data: { originalROWID: 4000 + Number(messageId), guid, text: message, isFromMe: true, error: 0, tempGuid },
      },
    };
  }

  /** `GET /api/v1/server/info`: the Mac and the iMessage account it is signed in with. */
  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method !== 'GET' || request.path !== '/api/v1/server/info')
      return { status: 404, json: { status: 404, message: 'Not Found' } };
    return (
      this.passwordProblem(request) ?? {
        status: 200,
        json: {
          status: 200,
          message: 'Successfully fetched server info',
          data: {
            computer_id: 'alice@Alices-Mac-mini',
            os_version: '15.1',
            server_version: '1.9.9',
            private_api: false,
            detected_icloud: 'alice@icloud.com',
            detected_imessage: 'alice@icloud.com',
          },
        },
      }
    );
  }

  private passwordProblem(request: RecordedRequest): FakeAnswer | null {
    const given = request.query.get('guid') ?? request.query.get('password') ?? request.query.get('token');
    if (given === null) return unauthorized('Missing server password!');
    if (given.trim() !== BLUEBUBBLES_PASSWORD.trim()) return unauthorized('Unauthorized');
    return null;
  }

  private refusalOf(request: RecordedRequest): FakeAnswer | null {
    const passwordProblem = this.passwordProblem(request);
    if (passwordProblem) return passwordProblem;
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json'))
      return badRequest("A 'message' is required when sending via AppleScript");
    const { chatGuid, tempGuid, message, method = 'apple-script' } = (request.body ?? {}) as Record<string, unknown>;
    if (typeof chatGuid !== 'string' || chatGuid === '') return badRequest('The chatGuid field is required.');
    if (method !== 'apple-script' && method !== 'private-api') return badRequest('The selected method is invalid.');
    if (method === 'apple-script' && (typeof tempGuid !== 'string' || tempGuid === ''))
      return badRequest("A 'tempGuid' is required when sending via AppleScript");
    if (typeof message !== 'string' || message === '') return badRequest("A 'message' is required when sending via AppleScript");
    if (!chatGuid.includes(';')) return serverError(`Invalid GUID! Can't send message to: ${chatGuid}`);
    const direct = DIRECT.exec(chatGuid);
    if (!this.chats.has(chatGuid) && !(direct && this.addresses.has(direct[1]!))) {
      return {
        status: 500,
        json: {
          status: 500,
          message: 'Message Send Error',
          error: { type: 'iMessage Error', message: 'Failed to send message! See attached message error code.' },
          data: { guid: 'p:0/FAILED', error: 22 },
        },
      };
    }
    return null;
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      // BlueBubbles has no rate limit of its own; a proxy or tunnel in front of it does.
      case 'rate_limited':
        return { status: 429, headers: { 'retry-after': String(retryAfter) }, text: 'Too Many Requests' };
      case 'unavailable':
        return serverError('Failed to retrieve password from the database');
      case 'refused':
        return badRequest('Chat does not exist!');
      case 'unauthorized':
        return unauthorized('Unauthorized');
    }
  }
}

function unauthorized(error: string): FakeAnswer {
  return {
    status: 401,
    json: {
      status: 401,
      message: 'You are not authorized to access this resource',
      error: { type: 'Authentication Error', message: error },
    },
  };
}

function badRequest(error: string): FakeAnswer {
  return {
    status: 400,
    json: {
      status: 400,
      message: "You've made a bad request! Please check your request params & body",
      error: { type: 'Validation Error', message: error },
    },
  };
}

/** An error the server did not expect, as its error middleware answers it. */
function serverError(error: string): FakeAnswer {
  return {
    status: 500,
    json: { status: 500, message: 'An unhandled error has occurred!', error: { type: 'Server Error', message: error } },
  };
}
