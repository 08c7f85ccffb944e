import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const HOME_ASSISTANT_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.test-long-lived-token.c2lnbmF0dXJl';
/** What a template expression other than a string literal renders to here: Home Assistant would evaluate it. */
export const EVALUATED = '⟨evaluated⟩';

const NOTIFY_PATH = /^\/api\/services\/notify\/([^/]+)$/;

/** aiohttp's plain-text answers, which Home Assistant's REST API gives for these statuses. */
const plain = (status: number, text: string, headers?: Record<string, string>): FakeAnswer => ({ status, text, headers });

/**
 * A Home Assistant instance's REST API (https://developers.home-assistant.io/docs/api/rest/) as
 * far as notify actions go: `POST /api/services/notify/<service>` with a long-lived token as the
 * bearer; HTTP 200 with the JSON list of changed states (empty for notify actions) once the action
 * ran; `400: Bad Request` for an unknown action or fields its schema refuses; `401: Unauthorized`.
 * `message` and `title` are rendered as Jinja templates the way Home Assistant does; a string
 * literal expression renders to its text and any other expression to EVALUATED. Home Assistant
 * itself has no rate limit: a 429 with Retry-After is what a reverse proxy in front of it sends.
 */
export class FakeHomeAssistantServer extends HttpFakePlatform {
  readonly platform = 'homeassistant';
  readonly target = 'homeassistant:mobile_app_pixel_7';
  /** The notify actions this instance has. */
  readonly services = new Set(['mobile_app_pixel_7', 'mobile_app_ipad', 'persistent_notification']);
  /** The persistent notifications shown in the panel, by notification id; the same id replaces. */
  readonly notifications = new Map<string, { message: string; title?: string }>();
  /** Replaces the next confirmation, to try answers Home Assistant should never give. */
  oddConfirmation: FakeAnswer | null = null;

  get settings(): Record<string, string> {
    return { url: this.url, token: HOME_ASSISTANT_TOKEN, home_channel: 'persistent_notification' };
  }

  static start(): Promise<FakeHomeAssistantServer> {
    return new FakeHomeAssistantServer().start();
  }

  /** `refused`: `400: Bad Request` to `GET /api/config`; `anonymous`: a config without `location_name`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.method === 'GET' && request.path === '/api/config',
      oddity === 'refused' ? plain(400, '400: Bad Request') : { status: 200, json: { version: '2026.11.1', time_zone: 'Europe/Berlin' } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    if (request.method !== 'POST' || !NOTIFY_PATH.test(request.path)) return null;
    return typeof request.body?.message === 'string' ? render(request.body.message) : '';
  }

  protected confirm(request: RecordedRequest): FakeAnswer {
    const refusal = this.refusalOf(request);
    if (refusal) return { ...refusal, accepted: false };
    if (this.oddConfirmation) {
      const odd = this.oddConfirmation;
      this.oddConfirmation = null;
      return { ...odd, accepted: false };
    }
    const service = NOTIFY_PATH.exec(request.path)![1]!;
    const { message, title, data } = request.body as { message: string; title?: string; data?: { notification_id?: string } };
    if (service === 'persistent_notification') {
      const id = data?.notification_id ?? `generated-${this.notifications.size + 1}`;
      this.notifications.set(id, { message: render(message), ...(title !== undefined ? { title: render(title) } : {}) });
    }
    return { status: 200, json: [] };
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfter: number): FakeAnswer {
    switch (failure) {
      case 'rate_limited':
        return plain(429, '429 Too Many Requests', { 'retry-after': String(retryAfter) });
      case 'unavailable':
        return plain(500, '500 Internal Server Error\n\nServer got itself in trouble');
      case 'refused':
        return plain(400, '400: Bad Request');
      case 'unauthorized':
        return plain(401, '401: Unauthorized');
    }
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.method === 'GET' && request.path === '/api/') {
      return this.authorized(request) ? { status: 200, json: { message: 'API running.' } } : plain(401, '401: Unauthorized');
    }
    if (request.method === 'GET' && request.path === '/api/config') {
      return this.authorized(request)
        ? { status: 200, json: { location_name: 'Home', version: '2026.11.1', time_zone: 'Europe/Berlin', unit_system: { length: 'km' } } }
        : plain(401, '401: Unauthorized');
    }
    return plain(404, '404: Not Found');
  }

  private authorized(request: RecordedRequest): boolean {
    return request.headers.authorization === `Bearer ${HOME_ASSISTANT_TOKEN}`;
  }

  /** Home Assistant's answer to a call it would not run; null for one it runs. */
  private refusalOf(request: RecordedRequest): FakeAnswer | null {
    if (!this.authorized(request)) return plain(401, '401: Unauthorized');
    const service = NOTIFY_PATH.exec(request.path)![1]!;
    if (!this.services.has(service)) return plain(400, '400: Bad Request');
    // Home Assistant parses the body as JSON whatever its content type says.
    let body: unknown;
    try {
      body = JSON.parse(request.raw);
    } catch {
      return { status: 400, json: { message: 'Data should be valid JSON.' } };
    }
    // NOTIFY_SERVICE_SCHEMA: message required; title and target optional; data a mapping; nothing else.
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return plain(400, '400: Bad Request');
    const fields = body as Record<string, unknown>;
    if (typeof fields.message !== 'string') return plain(400, '400: Bad Request');
    if (fields.title !== undefined && typeof fields.title !== 'string') return plain(400, '400: Bad Request');
    if (fields.data !== undefined && (typeof fields.data !== 'object' || fields.data === null)) return plain(400, '400: Bad Request');
    if (Object.keys(fields).some((key) => !['message', 'title', 'target', 'data'].includes(key))) return plain(400, '400: Bad Request');
    return null;
  }
}

/**
 * Home Assistant's template rendering, as far as a test needs it: a text without `{{`, `{%` or
 * `{#` is static; otherwise a string literal expression renders to its text, any other expression
 * to EVALUATED, and statements and comments to nothing.
 */
export function render(template: string): string {
  if (!/\{[{%#]/.test(template)) return template;
  return template.replace(/\{\{(.*?)\}\}|\{%.*?%\}|\{#.*?#\}/gs, (whole, expression: string | undefined) => {
    if (expression === undefined) return '';
    const literal = /^\s*(['"])(.*)\1\s*$/s.exec(expression);
    return literal ? literal[2]! : EVALUATED;
  });
}
