import { randomUUID } from 'node:crypto';
import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { apiRoot, PlatformHttp, type PlatformAnswer } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** One recipient's outcome, as signal-cli reports it in `results`. */
interface RecipientResult {
  recipientAddress?: { number?: string | null; uuid?: string | null } | null;
  type?: string;
  retryAfterSeconds?: number | null;
}

interface SendOutcome {
  timestamp?: number;
  results?: RecipientResult[];
}

interface RpcReply {
  id?: unknown;
  result?: SendOutcome;
  error?: { code?: number; message?: string; data?: { response?: SendOutcome } | null };
}

const GROUP_PREFIX = 'group:';
const RATE_LIMIT_ERROR = -5;
/** JSON-RPC "Method not found": signal-cli's answer to a method the daemon's mode does not offer. */
const METHOD_NOT_FOUND = -32601;
// signal-cli names the account it does not serve in these words (multi-account daemon).
const UNKNOWN_ACCOUNT = /specified account does not exist|requires valid account/i;

/**
 * signal-cli's JSON-RPC `send` over its HTTP daemon (`signal-cli -a <account> daemon --http`,
 * https://github.com/AsamK/signal-cli/blob/master/man/signal-cli-jsonrpc.5.adoc). The daemon has
 * no authentication; the `account` param picks the registered number on a multi-account daemon.
 * Signal's `timestamp` is the message id. signal-cli answers errors with HTTP 200 and a JSON-RPC
 * `error`, and a group send with per-member `results`, so both are read before anything counts.
 */
export class SignalSender implements PlatformSender {
  readonly platform = 'signal';
  readonly partLimit = 8000;
  private readonly http: PlatformHttp;

  constructor(private readonly settings: PlatformSettings) {
    this.http = new PlatformHttp(settings, ['account']);
  }

  async send(to: ChatAddress, text: string): Promise<SentPart> {
    // Signal has no threads: posting to the chat instead would deliver somewhere the user did not ask for.
    if (to.threadId !== null)
      throw new PlatformSendError('refused', `signal has no threads; deliver to "${to.chatId}" without thread "${to.threadId}"`);
    const account = this.settings.require('account');
    const url = `${apiRoot(this.settings.require('http_url'))}/api/v1/rpc`;
    const id = randomUUID();
    const params = to.chatId.startsWith(GROUP_PREFIX)
      ? { account, message: text, groupId: to.chatId.slice(GROUP_PREFIX.length) }
      : { account, message: text, recipient: [to.chatId] };
    const answer = await this.http.call({ url, json: { jsonrpc: '2.0', method: 'send', params, id } }).catch((error: unknown) => {
      throw this.withDaemonHint(error);
    });
    if (answer.status !== 200) throw this.http.failure(answer, this.statusDetail(answer, url));
    const reply = (answer.json ?? {}) as RpcReply;
    if (reply.error) throw this.refusal(reply.error, account);
    const timestamp = reply.result?.timestamp;
    if (reply.id !== id || typeof timestamp !== 'number') throw this.http.unconfirmed(answer);
    const results = Array.isArray(reply.result?.results) ? reply.result.results : [];
    if (results.length > 0 && !results.some((result) => result.type === 'SUCCESS')) {
      throw this.undelivered(undefined, 'no recipient got the message', results);
    }
    return { messageId: String(timestamp) };
  }

  /**
   * `listAccounts` (signal-cli-jsonrpc(5)): the account must be among those a multi-account daemon
   * serves. A daemon started with `-a <account>` serves that one number and has no `listAccounts`;
   * there the `version` call shows the daemon answers, and the account is taken as configured.
   */
  async whoAmI(): Promise<string> {
    const account = this.settings.require('account');
    const listed = await this.rpc('listAccounts', {});
    if ('result' in listed) {
      const numbers = Array.isArray(listed.result) ? listed.result.map((entry) => (entry as { number?: unknown } | null)?.number) : [];
      if (!numbers.includes(account)) throw this.http.refusedCredentials(`the signal-cli daemon has no account ${account}`);
      return account;
    }
    if (listed.error.code !== METHOD_NOT_FOUND)
      throw new PlatformSendError(
        'refused',
        `signal refused the credentials check (signal-cli error ${listed.error.code ?? '?'}: ${this.http.clean(listed.error.message ?? 'no message')})`,
      );
    const version = await this.rpc('version', {});
    const number = 'result' in version ? (version.result as { version?: unknown } | null)?.version : undefined;
    return `${account} (single-account signal-cli${typeof number === 'string' ? ` ${number}` : ''})`;
  }

  /** One JSON-RPC call of the credentials check, not a send: its `result`, or its `error`. */
  private async rpc(
    method: string,
    params: Record<string, unknown>,
  ): Promise<{ result: unknown } | { error: NonNullable<RpcReply['error']> }> {
    const url = `${apiRoot(this.settings.require('http_url'))}/api/v1/rpc`;
    const id = randomUUID();
    const answer = await this.http.call({ url, json: { jsonrpc: '2.0', method, params, id } }).catch((error: unknown) => {
      throw this.withDaemonHint(error);
    });
    if (answer.status !== 200) throw this.http.failure(answer, this.statusDetail(answer, url), undefined, 'check');
    const reply = (answer.json ?? {}) as RpcReply & { result?: unknown };
    if (reply.error) return { error: reply.error };
    if (reply.id !== id || !('result' in reply)) throw this.http.unconfirmed(answer, 'check');
    return { result: reply.result };
  }

  private refusal(error: NonNullable<RpcReply['error']>, account: string): PlatformSendError {
    const said = `signal-cli error ${error.code ?? '?'}: ${error.message ?? 'no message'}`;
    const message = error.message ?? '';
    if (UNKNOWN_ACCOUNT.test(message) || (message.includes(account) && /not registered/i.test(message))) {
      return this.http.refusedCredentials(said);
    }
    const results = error.data?.response?.results;
    return this.undelivered(error.code, said, Array.isArray(results) ? results : []);
  }

  /** signal-cli's "Failed to send message" says little on its own; the recipients' results say why. */
  private undelivered(code: number | undefined, said: string, results: RecipientResult[]): PlatformSendError {
    const who = results.map(
      (result) => `${result.recipientAddress?.number ?? result.recipientAddress?.uuid ?? 'a recipient'} ${result.type ?? 'failed'}`,
    );
    const detail = this.http.clean(who.length > 0 ? `${said}: ${who.join(', ')}` : said);
    const everyone = (type: string) => results.length > 0 && results.every((result) => result.type === type);
    if (code === RATE_LIMIT_ERROR || everyone('RATE_LIMIT_FAILURE')) {
      const waits = results.map((result) => result.retryAfterSeconds).filter((seconds): seconds is number => typeof seconds === 'number');
      return new PlatformSendError(
        'rate_limited',
        `signal is rate-limiting (${detail})`,
        waits.length > 0 ? Math.max(...waits) * 1000 : null,
      );
    }
    if (everyone('NETWORK_FAILURE')) return new PlatformSendError('unavailable', `signal-cli could not reach Signal's servers (${detail})`);
    return new PlatformSendError('refused', `signal refused the message (${detail})`);
  }

  /** What a non-200 answer means for a daemon that otherwise always answers 200. */
  private statusDetail(answer: PlatformAnswer, url: string): string | undefined {
    if ([404, 405, 415].includes(answer.status))
      return `no signal-cli JSON-RPC endpoint at ${url}; check ${this.settings.where('http_url')}`;
    if (answer.status === 421)
      return `signal-cli accepts only the host name it listens on; use that address in ${this.settings.where('http_url')}`;
    return undefined;
  }

  private withDaemonHint(error: unknown): unknown {
    if (!(error instanceof PlatformSendError) || !error.message.startsWith('could not reach')) return error;
    const hint = `is "signal-cli -a ${this.settings.require('account')} daemon --http" running there?`;
    return new PlatformSendError(error.kind, `${error.message}; ${hint}`, null, { cause: error });
  }
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new SignalSender(settings);
}
