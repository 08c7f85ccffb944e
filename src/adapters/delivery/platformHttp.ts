import { PlatformSendError } from '../../application/ports/PlatformSender.js';
import { escapeControlCharacters } from '../../domain/controlCharacters.js';
import { errorText } from '../../domain/errors.js';
import type { PlatformSettings } from './PlatformSettings.js';

export interface PlatformRequest {
  method?: 'GET' | 'POST' | 'PUT';
  url: string;
  headers?: Record<string, string>;
  /** Sent as `application/json`. */
  json?: unknown;
  /** Sent as `application/x-www-form-urlencoded`. */
  form?: Record<string, string>;
  /** Ends the request early (a receiver being stopped); it then fails as unanswered. */
  signal?: AbortSignal;
  /** How long this request may take, when not the platform's timeout (a long poll). */
  timeoutMs?: number;
}

export interface PlatformAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body; undefined when it is not JSON. */
  json: unknown;
}

const DETAIL_LIMIT = 300;

/**
 * What a request was for, as its errors word it: delivering a part (`send`), or the who-am-I call
 * that checks the credentials without sending anything (`check`), whose failures must not speak
 * of a message.
 */
export type RequestPurpose = 'send' | 'check';

/** What a failed who-am-I call refused, in every adapter's words. */
export const CREDENTIALS_CHECK = 'the credentials check';

/** What the platform refused: the message, or the credentials check. */
export function refusedSubject(purpose: RequestPurpose): string {
  return purpose === 'check' ? CREDENTIALS_CHECK : 'the message';
}

/**
 * HTTP for the platform adapters: global `fetch` with the platform's timeout, answers read
 * whole, and every failure turned into a PlatformSendError whose text names the platform and
 * carries none of its secrets.
 */
export class PlatformHttp {
  constructor(
    private readonly settings: PlatformSettings,
    /** The settings to name when the platform refuses the credentials (401/403). */
    private readonly credentialKeys: readonly string[],
  ) {}

  /** Sends the request; resolves with any HTTP answer, rejects only when none came in time. */
  async call(request: PlatformRequest): Promise<PlatformAnswer> {
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    let body: string | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json; charset=utf-8';
      body = JSON.stringify(request.json);
    } else if (request.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(request.form).toString();
    }
    let response: Response;
    let text: string;
    const timeoutMs = request.timeoutMs ?? this.settings.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      response = await fetch(request.url, {
        method: request.method ?? (body === undefined ? 'GET' : 'POST'),
        headers,
        body,
        signal: request.signal === undefined ? timeout : AbortSignal.any([request.signal, timeout]),
      });
      text = await response.text();
    } catch (error) {
      throw this.unreachable(request.url, error, timeoutMs);
    }
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  }

  /**
   * The error for an answer that is not a confirmation: 429 with the platform's hint (the
   * `Retry-After` header, or `retryAfterSeconds` from its body), 5xx to retry, 401 naming the
   * credentials to check, 403 saying they may not post there (or, for a check, may not read their
   * own account), anything else refused with the platform's own `detail`.
   */
  failure(
    answer: PlatformAnswer,
    detail: string | undefined,
    retryAfterSeconds?: number,
    purpose: RequestPurpose = 'send',
  ): PlatformSendError {
    const platform = this.settings.platform;
    const said = this.clean(detail ?? answer.text);
    const status = said ? `HTTP ${answer.status}: ${said}` : `HTTP ${answer.status}`;
    if (answer.status === 429) {
      return new PlatformSendError(
        'rate_limited',
        `${platform} is rate-limiting (${status})`,
        retryAfterMs(answer.headers, retryAfterSeconds),
      );
    }
    if (answer.status >= 500) return new PlatformSendError('unavailable', `${platform} is unavailable (${status})`);
    if (answer.status === 401) return this.refusedCredentials(status);
    if (answer.status === 403 && purpose === 'check') {
      return new PlatformSendError(
        'refused',
        `${platform} refused ${CREDENTIALS_CHECK} (${status}); check ${this.checkList()} and what its account may read`,
      );
    }
    if (answer.status === 403) {
      // Usually not a bad credential but one that may not post there (a bot not in the channel, blocked by the user).
      return new PlatformSendError(
        'refused',
        `${platform} refused access (${status}); check that the account of ${this.checkList()} may post to that destination`,
      );
    }
    return new PlatformSendError('refused', `${platform} refused ${refusedSubject(purpose)} (${status})`);
  }

  /**
   * An answer that looks like success but confirms nothing: the message is not counted as
   * delivered, or, for a check, the answer named no account.
   */
  unconfirmed(answer: PlatformAnswer, purpose: RequestPurpose = 'send'): PlatformSendError {
    const lacking = purpose === 'check' ? 'naming the account' : 'confirming the message';
    return new PlatformSendError(
      'refused',
      `${this.settings.platform} answered HTTP ${answer.status} without ${lacking} (${this.clean(answer.text) || 'empty answer'})`,
    );
  }

  /** The platform said the credentials are wrong, in whatever way it says it. */
  refusedCredentials(said: string): PlatformSendError {
    return new PlatformSendError(
      'refused',
      `${this.settings.platform} refused the credentials (${this.clean(said)}); check ${this.checkList()}`,
    );
  }

  private checkList(): string {
    return this.credentialKeys.map((key) => this.settings.where(key)).join(' and ');
  }

  /**
   * One line, cut short, with every secret of the platform replaced by `***` and every other
   * control character (a NUL, an ESC in a garbage answer) escaped as `\u0000`.
   */
  clean(text: string): string {
    let line = text.replace(/\s+/g, ' ').trim();
    for (const secret of this.settings.secrets) line = line.split(secret).join('***');
    line = escapeControlCharacters(line);
    return line.length > DETAIL_LIMIT ? `${line.slice(0, DETAIL_LIMIT)}…` : line;
  }

  private unreachable(url: string, error: unknown, timeoutMs: number): PlatformSendError {
    const platform = this.settings.platform;
    // DOMException is not an Error in every realm; its name is what counts.
    const name = (error as { name?: unknown } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return new PlatformSendError('unavailable', `${platform} did not answer within ${timeoutMs / 1000} s`);
    }
    // fetch wraps the socket's error in `cause`; errors from another realm fail instanceof, so read fields.
    const cause = (error as { cause?: unknown } | null)?.cause ?? error;
    const code = (cause as { code?: unknown } | null)?.code;
    const why = typeof code === 'string' ? code : errorText(cause);
    return new PlatformSendError('unavailable', `could not reach ${platform} at ${originOf(url)} (${this.clean(why)})`, null, {
      cause: error,
    });
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'its address';
  }
}

/** The wait a 429 asks for: seconds or an HTTP date in `Retry-After`, else the body's value. */
export function retryAfterMs(headers: Headers, bodySeconds?: number): number | null {
  const header = headers.get('retry-after');
  if (header !== null) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  }
  return typeof bodySeconds === 'number' && Number.isFinite(bodySeconds) && bodySeconds >= 0 ? bodySeconds * 1000 : null;
}

/** Trims a configured root so that paths can be appended to it. */
export function apiRoot(url: string): string {
  return url.replace(/\/+$/, '');
}
