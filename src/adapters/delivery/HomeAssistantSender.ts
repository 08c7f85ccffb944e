import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { homeAssistantService } from './platformAddressing.js';
import { apiRoot, PlatformHttp, type PlatformAnswer } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** The action that shows a notification in Home Assistant's own panel; it takes an id that replaces instead of adding. */
const PERSISTENT_NOTIFICATION = 'persistent_notification';
/** What makes Home Assistant treat a text as a Jinja template instead of a static string. */
const TEMPLATE_MARK = /\{[{%#]/;

/**
 * Home Assistant REST API, call an action (https://developers.home-assistant.io/docs/api/rest/):
 * `POST {url}/api/services/notify/{service}` with `{message, title?}` and a long-lived access
 * token as the bearer. Home Assistant answers a finished call with HTTP 200 and the JSON list of
 * the states the call changed, which for a notify action is usually empty; that list is the
 * confirmation, and it means the action ran without an error, not that a phone showed it (a
 * mobile_app push that fails after that is only in Home Assistant's log). An unknown action or
 * invalid fields are HTTP 400 with no further words, an error inside the action HTTP 500.
 * Home Assistant gives no message id, so the part's own key stands for one; for
 * persistent_notification it is also the notification id, so a retry replaces instead of adding.
 */
export class HomeAssistantSender implements PlatformSender {
  readonly platform = 'homeassistant';
  readonly partLimit = 4096;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['token']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const named = homeAssistantService(to);
    if ('problem' in named) throw new PlatformSendError('refused', `homeassistant cannot deliver to "${to.chatId}": ${named.problem}`);
    const body: Record<string, unknown> = { message: asStaticTemplate(text) };
    const title = this.settings.get('title');
    if (title !== undefined) body.title = asStaticTemplate(title);
    if (named.service === PERSISTENT_NOTIFICATION) body.data = { notification_id: idempotencyKey };
    const answer = await this.http.call({
      url: `${this.root()}/api/services/notify/${named.service}`,
      headers: { authorization: `Bearer ${this.settings.require('token')}` },
      json: body,
    });
    if (answer.status === 200 && Array.isArray(answer.json)) return { messageId: idempotencyKey };
    if (answer.status >= 200 && answer.status < 300) throw this.http.unconfirmed(answer);
    throw this.failure(answer, named.service);
  }

  /**
   * `GET {url}/api/config` (https://developers.home-assistant.io/docs/api/rest/): the home's
   * name and the Home Assistant version; it needs only a valid token.
   */
  async whoAmI(): Promise<string> {
    const answer = await this.http.call({
      url: `${this.root()}/api/config`,
      headers: { authorization: `Bearer ${this.settings.require('token')}` },
    });
    if (answer.status < 200 || answer.status >= 300)
      throw answer.status === 401 ? this.http.failure(answer, undefined) : this.failure(answer, null);
    const config = (answer.json ?? {}) as { location_name?: unknown; version?: unknown };
    if (typeof config.location_name !== 'string' || config.location_name === '') throw this.http.unconfirmed(answer, 'check');
    return typeof config.version === 'string' ? `${config.location_name} (Home Assistant ${config.version})` : config.location_name;
  }

  /** `url` is Home Assistant's address; one pasted with the `/api` suffix works as well. */
  private root(): string {
    return apiRoot(this.settings.require('url')).replace(/\/api$/, '');
  }

  /** `service` is the notify action called; null for the credentials check, which calls none. */
  private failure(answer: PlatformAnswer, service: string | null): PlatformSendError {
    const said = this.http.clean(answer.text);
    const status = said ? `HTTP ${answer.status}: ${said}` : `HTTP ${answer.status}`;
    switch (answer.status) {
      case 400:
        if (service === null) return this.http.failure(answer, said || undefined, undefined, 'check');
        return new PlatformSendError(
          'refused',
          `homeassistant refused the message (${status}); Home Assistant has no action notify.${service}, or it refused the message's fields: look for it under Developer tools → Actions`,
        );
      case 403:
        // Home Assistant answers 403 to an address it banned after failed logins (http: ip_ban_enabled).
        return new PlatformSendError(
          'refused',
          `homeassistant refused access (${status}); check ${this.settings.where('token')}, and remove this host from Home Assistant's ip_bans.yaml if it was banned`,
        );
      case 404:
        return new PlatformSendError(
          'refused',
          `homeassistant has no API at that address (${status}); check that ${this.settings.where('url')} is Home Assistant's address, such as http://homeassistant.local:8123`,
        );
      case 500: {
        const failed = service === null ? '' : `the action notify.${service} failed, and `;
        return new PlatformSendError(
          'unavailable',
          `homeassistant is unavailable (${status}); ${failed}Home Assistant's log (Settings → System → Logs) says why`,
        );
      }
      default:
        return this.http.failure(answer, said || undefined, undefined, service === null ? 'check' : 'send');
    }
  }
}

/**
 * Home Assistant renders a notify action's `message` and `title` as Jinja templates, so an answer
 * quoting `{{ states(…) }}` would be evaluated with access to the home's state. Writing every `{`
 * as the expression `{{ '{' }}` makes the template render to exactly the text; a text without
 * template marks is static and goes as it is.
 */
function asStaticTemplate(text: string): string {
  return TEMPLATE_MARK.test(text) ? text.replace(/\{/g, "{{ '{' }}") : text;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new HomeAssistantSender(settings);
}
