import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const TELEGRAM_TOKEN = '123456:TEST-telegram-token';

/** Telegram's Bot API as https://core.telegram.org/bots/api describes it: `POST /bot<token>/sendMessage`. */
export class FakeTelegramServer extends HttpFakePlatform {
  readonly platform = 'telegram';
  readonly target = 'telegram:-1001234567890';

  get settings(): Record<string, string> {
    return { bot_token: TELEGRAM_TOKEN, base_url: this.url, home_channel: '-1001234567890:17' };
  }

  static start(): Promise<FakeTelegramServer> {
    return new FakeTelegramServer().start();
  }

  /** `refused`: the 404 Telegram gives a token it cannot place; `anonymous`: a bot with neither id nor username. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => /^\/bot[^/]+\/getMe$/.test(request.path),
      oddity === 'refused'
        ? { status: 404, json: { ok: false, error_code: 404, description: 'Not Found' } }
        : { status: 200, json: { ok: true, result: { is_bot: true, first_name: 'Delivery' } } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    return request.method === 'POST' && /^\/bot[^/]+\/sendMessage$/.test(request.path) ? String(request.body?.text ?? '') : null;
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    if (request.path !== `/bot${TELEGRAM_TOKEN}/sendMessage`)
      return { status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } };
    if (request.body?.chat_id === '-404')
      return { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } };
    return {
      status: 200,
      json: { ok: true, result: { message_id: Number(messageId), chat: { id: request.body.chat_id }, text: request.body.text } },
    };
  }

  /** `GET /bot<token>/getMe`: the bot, or 401 for another token. */
  protected override other(request: RecordedRequest): FakeAnswer {
    if (!/^\/bot[^/]+\/getMe$/.test(request.path)) return { status: 404, json: { ok: false, error_code: 404, description: 'Not Found' } };
    if (request.path !== `/bot${TELEGRAM_TOKEN}/getMe`)
      return { status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } };
    return { status: 200, json: { ok: true, result: { id: 123456, is_bot: true, first_name: 'Delivery', username: 'delivery_bot' } } };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return {
          status: 429,
          json: {
            ok: false,
            error_code: 429,
            description: `Too Many Requests: retry after ${retryAfter}`,
            parameters: { retry_after: retryAfter },
          },
        };
      case 'unavailable':
        return { status: 502, json: { ok: false, error_code: 502, description: 'Bad Gateway' } };
      case 'refused':
        return { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } };
      case 'unauthorized':
        return { status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } };
    }
  }
}
