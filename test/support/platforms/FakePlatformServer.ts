import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The ways a fake platform can refuse a message, each answered in that platform's own shape:
 * `rate_limited` (429 with its retry hint), `unavailable` (5xx), `refused` (a permanent 4xx, or a
 * 200 with an error body where the platform does that), `unauthorized` (the credentials refused),
 * `silent` (the request is never answered).
 */
export type FakeFailure = 'rate_limited' | 'unavailable' | 'refused' | 'unauthorized' | 'silent';

/**
 * The ways a "who am I" call can fail that say nothing against the credentials: `refused` a 4xx
 * other than 401 (or the platform's own refusal of that kind), `anonymous` a success that names
 * no account.
 */
export type WhoAmIOddity = 'refused' | 'anonymous';

export interface FailurePlan {
  failure: FakeFailure;
  /** How many matching sends fail; default 1, `Infinity` for every one. */
  times?: number;
  /** Only sends whose text matches fail. */
  when?: (text: string) => boolean;
  /** The hint given with `rate_limited`. */
  retryAfterSeconds?: number;
}

/** A local server that speaks one platform's send API, for the adapter's tests and the contract suite. */
export interface FakePlatformServer {
  readonly platform: string;
  /** `platforms.<name>` settings that point the adapter at this server. */
  readonly settings: Record<string, string>;
  /** An explicit target this server accepts, e.g. `telegram:12345`. */
  readonly target: string;
  /** The texts the server confirmed, in order. */
  readonly delivered: string[];
  /** Send requests received, answered or not. */
  readonly attempts: number;
  /** Whether the platform gives a retry hint on 429 (SMTP has no 429). */
  readonly rateLimitHint: boolean;
  /**
   * Settings that the platform refuses, for a platform whose credentials are not a token, secret
   * or password (a signal-cli account); default: every such setting made wrong.
   */
  readonly wrongCredentials?: Record<string, string>;
  failNext(plan: FailurePlan): void;
  /**
   * Answers the next "who am I" call the `oddity` way, in the platform's shape; false when the
   * platform never answers that way (SMTP has no answer without the account). Absent where the
   * platform has no such call.
   */
  answerNextWhoAmI?(oddity: WhoAmIOddity): boolean;
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  raw: string;
  /** The JSON or form body, parsed; undefined for none. */
  body: any;
}

export interface FakeAnswer {
  status: number;
  /** Whether the message counts as delivered; default: a 2xx status. A 200 carrying an error says false. */
  accepted?: boolean;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
}

/**
 * The HTTP side shared by the fakes: a server on 127.0.0.1 that records every request, parses
 * JSON and form bodies, and applies the failure plans to sends. A subclass says which requests are
 * sends (and their text), how the platform confirms one, how it fails, and answers the rest.
 */
export abstract class HttpFakePlatform implements FakePlatformServer {
  abstract readonly platform: string;
  abstract readonly target: string;
  readonly rateLimitHint: boolean = true;
  readonly delivered: string[] = [];
  readonly requests: RecordedRequest[] = [];
  /** The send requests that were confirmed, in order, for assertions on their shape. */
  readonly sends: RecordedRequest[] = [];
  attempts = 0;
  private plans: Array<Required<Omit<FailurePlan, 'when' | 'retryAfterSeconds'>> & FailurePlan> = [];
  private readonly scriptedRequests: Array<{ when: (request: RecordedRequest) => boolean; answer: FakeAnswer }> = [];
  private server: Server | null = null;
  private nextId = 1;

  abstract get settings(): Record<string, string>;

  /** The text of a send request, or null when the request is not a send. */
  protected abstract textOf(request: RecordedRequest): string | null;
  /** The platform's answer to a send that no failure plan matched: its confirmation with `messageId`, or its refusal of a bad request. */
  protected abstract confirm(request: RecordedRequest, messageId: string): FakeAnswer;
  /** The platform's answer to a failing send. */
  protected abstract fail(failure: Exclude<FakeFailure, 'silent'>, retryAfterSeconds: number, request: RecordedRequest): FakeAnswer;
  /** Any request that is not a send: listings, token calls … Default 404. */
  protected other(_request: RecordedRequest): FakeAnswer {
    return { status: 404, json: { error: 'not found' } };
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      let raw = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (raw += chunk));
      request.on('end', () => this.handle(request.method ?? 'GET', request.url ?? '/', request.headers, raw, response));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  failNext(plan: FailurePlan): void {
    this.plans.push({ times: 1, ...plan });
  }

  /**
   * Answers the next request that `when` matches with `answer`, before the platform's own logic
   * and without counting it as a send attempt: for answers the platform gives rarely, such as an
   * odd answer to its "who am I" call.
   */
  answerNextRequest(when: (request: RecordedRequest) => boolean, answer: FakeAnswer): void {
    this.scriptedRequests.push({ when, answer });
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  private handle(method: string, url: string, headers: IncomingHttpHeaders, raw: string, response: ServerResponse): void {
    const parsed = new URL(url, 'http://localhost');
    const request: RecordedRequest = {
      method,
      url,
      path: parsed.pathname,
      query: parsed.searchParams,
      headers,
      raw,
      body: parseBody(headers, raw),
    };
    this.requests.push(request);
    const scripted = this.scriptedRequests.findIndex((candidate) => candidate.when(request));
    if (scripted !== -1) return write(response, this.scriptedRequests.splice(scripted, 1)[0]!.answer);
    const text = this.textOf(request);
    if (text === null) return write(response, this.other(request));
    this.attempts += 1;
    const plan = this.plans.find((candidate) => candidate.times > 0 && (candidate.when?.(text) ?? true));
    if (plan) {
      plan.times -= 1;
      if (plan.failure === 'silent') return; // never answered; close() ends it
      return write(response, this.fail(plan.failure, plan.retryAfterSeconds ?? 3, request));
    }
    const answer = this.confirm(request, String(this.nextId));
    // Only what the platform accepted counts as delivered (a fake refuses a bad token or chat in confirm()).
    if (answer.accepted ?? answer.status < 300) {
      this.nextId += 1;
      this.delivered.push(text);
      this.sends.push(request);
    }
    write(response, answer);
  }
}

function parseBody(headers: IncomingHttpHeaders, raw: string): any {
  if (raw === '') return undefined;
  const type = headers['content-type'] ?? '';
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function write(response: ServerResponse, answer: FakeAnswer): void {
  const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.text ?? '');
  const type = answer.json !== undefined ? 'application/json' : 'text/plain';
  response.writeHead(answer.status, { 'content-type': type, ...answer.headers }).end(body);
}
