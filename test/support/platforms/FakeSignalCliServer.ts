import { HttpFakePlatform, type FakeAnswer, type FakeFailure, type RecordedRequest, type WhoAmIOddity } from './FakePlatformServer.js';

export const SIGNAL_ACCOUNT = '+15550001111';
export const SIGNAL_RECIPIENT = '+4915112345678';
/** A number Signal does not know: signal-cli fails the send with UNREGISTERED_FAILURE. */
export const SIGNAL_UNREGISTERED = '+4915100000404';
export const SIGNAL_GROUP_ID = 'Pmpi+EfPWmsxiomLe9Nx2XF9HOE483p6iKiFj65iMwI=';
/** A group whose every member is unregistered: signal-cli answers a result in which nobody got it. */
export const SIGNAL_DEAD_GROUP_ID = 'ZGVhZCBncm91cCBvZiB1bnJlZ2lzdGVyZWQgbWVtYmVycw==';
const GROUP_MEMBERS = ['+4915112345678', '+4917600000001'];
// Signal timestamps are milliseconds since the epoch; a fixed base keeps the fake off the clock.
const TIMESTAMP_BASE = 1_750_000_000_000;

type Params = Record<string, unknown>;

/**
 * signal-cli's HTTP daemon (`signal-cli -a <account> daemon --http`) as signal-cli-jsonrpc(5) and
 * its source describe it: `POST /api/v1/rpc` with a JSON-RPC 2.0 body, no authentication, every
 * JSON-RPC error answered with HTTP 200, a send's per-recipient `results` beside its `timestamp`.
 */
export class FakeSignalCliServer extends HttpFakePlatform {
  readonly platform = 'signal';
  readonly target = `signal:${SIGNAL_RECIPIENT}`;
  private override: { answer: (request: RecordedRequest) => FakeAnswer; times: number } | null = null;
  // `fail` is not given the request, but JSON-RPC errors echo its id; `textOf` runs just before it.
  private current: RecordedRequest | null = null;

  get settings(): Record<string, string> {
    return { http_url: this.url, account: SIGNAL_ACCOUNT, home_channel: `group:${SIGNAL_GROUP_ID}` };
  }

  static start(): Promise<FakeSignalCliServer> {
    return new FakeSignalCliServer().start();
  }

  /** Answers the next `times` sends with `answer` instead of the daemon's own logic, for answers it gives rarely. */
  answerSendsWith(answer: (request: RecordedRequest) => FakeAnswer, times = 1): void {
    this.override = { answer, times };
  }

  /** `refused`: HTTP 400 to `listAccounts`; `anonymous`: a JSON-RPC answer with neither `result` nor `error`. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    this.answerNextRequest(
      (request) => request.body?.method === 'listAccounts',
      oddity === 'refused' ? { status: 400, text: 'Bad Request' } : { status: 200, json: { jsonrpc: '2.0', id: null } },
    );
    return true;
  }

  protected textOf(request: RecordedRequest): string | null {
    if (!isRpcCall(request) || request.body?.method !== 'send') return null;
    this.current = request;
    return String(paramsOf(request).message ?? '');
  }

  protected confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    if (this.override && this.override.times > 0) {
      this.override.times -= 1;
      return this.override.answer(request);
    }
    const { id, jsonrpc } = request.body as { id?: unknown; jsonrpc?: unknown };
    // Without an id the call is a notification: the daemon runs it and answers nothing.
    if (id === undefined) return { status: 201 };
    if (jsonrpc !== '2.0') return rpcError(id, -32600, 'jsonrpc field must be set to "2.0"');
    const params = paramsOf(request);
    if (params.account !== SIGNAL_ACCOUNT) return rpcError(id, -32602, 'Specified account does not exist');
    if (typeof params.message !== 'string' || params.message === '') return rpcError(id, -1, 'No message given');
    const timestamp = TIMESTAMP_BASE + Number(messageId);
    if (params.groupId !== undefined) {
      if (params.recipient !== undefined) return rpcError(id, -1, 'Cannot send to a group and to recipients at once');
      if (params.groupId === SIGNAL_DEAD_GROUP_ID) {
        return rpcResult(id, {
          timestamp,
          results: GROUP_MEMBERS.map((number) => recipientResult(number, 'UNREGISTERED_FAILURE', params.groupId)),
        });
      }
      if (params.groupId !== SIGNAL_GROUP_ID) return rpcError(id, -1, `Group not found: ${String(params.groupId)}`);
      return rpcResult(id, { timestamp, results: GROUP_MEMBERS.map((number) => recipientResult(number, 'SUCCESS', SIGNAL_GROUP_ID)) });
    }
    const recipients = params.recipient;
    if (!Array.isArray(recipients) || recipients.length === 0) return rpcError(id, -1, 'No recipients given');
    if (recipients.includes(SIGNAL_UNREGISTERED)) {
      return rpcError(id, -1, 'Failed to send message', {
        response: { timestamp, results: [recipientResult(SIGNAL_UNREGISTERED, 'UNREGISTERED_FAILURE')] },
      });
    }
    return rpcResult(id, { timestamp, results: recipients.map((number) => recipientResult(String(number), 'SUCCESS')) });
  }

  protected fail(failure: Exclude<FakeFailure, 'silent'>, retryAfterSeconds: number): FakeAnswer {
    const id = this.current?.body?.id ?? null;
    const recipient = String((paramsOf(this.current).recipient as unknown[] | undefined)?.[0] ?? SIGNAL_RECIPIENT);
    const timestamp = TIMESTAMP_BASE;
    switch (failure) {
      case 'rate_limited':
        return rpcError(id, -5, 'Failed to send message due to rate limiting', {
          response: { timestamp, results: [{ ...recipientResult(recipient, 'RATE_LIMIT_FAILURE'), retryAfterSeconds }] },
        });
      case 'unavailable':
        // What signal-cli says when it cannot reach Signal's servers for the only recipient.
        return rpcError(id, -1, 'Failed to send message', {
          response: { timestamp, results: [recipientResult(recipient, 'NETWORK_FAILURE')] },
        });
      case 'refused':
        return rpcError(id, -1, 'Failed to send message', {
          response: { timestamp, results: [recipientResult(recipient, 'UNREGISTERED_FAILURE')] },
        });
      case 'unauthorized':
        return rpcError(id, -32602, 'Specified account does not exist');
    }
  }

  /** A number this daemon does not serve. */
  readonly wrongCredentials = { account: '+15559990000' };
  /** False for a daemon started with `-a <account>`, which serves one account and has no `listAccounts`. */
  multiAccount = true;

  /** `listAccounts` on a multi-account daemon, `version` on any; other methods are not implemented here. */
  protected override other(request: RecordedRequest): FakeAnswer {
    if (request.path !== '/api/v1/rpc') return { status: 404 };
    if (request.method !== 'POST') return { status: 405 };
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) return { status: 415 };
    if (request.body?.method === 'listAccounts' && this.multiAccount) return rpcResult(request.body.id, [{ number: SIGNAL_ACCOUNT }]);
    if (request.body?.method === 'version') return rpcResult(request.body.id, { version: '0.13.22' });
    return rpcError(request.body?.id ?? null, -32601, 'Method not implemented');
  }
}

function isRpcCall(request: RecordedRequest): boolean {
  return (
    request.method === 'POST' &&
    request.path === '/api/v1/rpc' &&
    String(request.headers['content-type'] ?? '').startsWith('application/json')
  );
}

function paramsOf(request: RecordedRequest | null): Params {
  const params: unknown = request?.body?.params;
  return typeof params === 'object' && params !== null ? (params as Params) : {};
}

function recipientResult(number: string, type: string, groupId?: unknown) {
  return { recipientAddress: { uuid: null, number, username: null }, ...(typeof groupId === 'string' ? { groupId } : {}), type };
}

export function rpcResult(id: unknown, result: unknown): FakeAnswer {
  return { status: 200, json: { jsonrpc: '2.0', result, id } };
}

export function rpcError(id: unknown, code: number, message: string, data: unknown = null): FakeAnswer {
  return { status: 200, json: { jsonrpc: '2.0', error: { code, message, data }, id } };
}
