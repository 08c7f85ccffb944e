import type { Agent, Response } from 'undici';
import { commonJsExports } from '../shared/commonJsModule.js';
import { AddressRefused, ipLiteralOf, policedLookup, type AddressPolicy } from './publicAddresses.js';

/** What one GET brought back. The body is read only for a 2xx answer. */
export interface HttpAnswer {
  status: number;
  statusText: string;
  /** Where the answer came from, after redirects. */
  url: string;
  /** The media type without parameters, lowercase; '' when the server sent none. */
  mediaType: string;
  /** The `charset` parameter of Content-Type, if any. */
  charset: string | null;
  body: Buffer;
  /** Whether the body was longer than the byte cap and only its start was read. */
  truncated: boolean;
}

export type HttpGetResult = { ok: true; answer: HttpAnswer } | { ok: false; problem: string; refusedAddress?: boolean };

export interface HttpGetOptions {
  /** The run's signal: aborting it cancels the request. */
  signal: AbortSignal;
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
  /**
   * The addresses it may connect to, checked at every connection, redirects included; absent,
   * any address.
   */
  addressPolicy?: AddressPolicy;
}

/** As browsers and fetch do. */
const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type Undici = typeof import('undici');
let undiciLoading: Promise<Undici> | null = null;

/** undici is loaded on the first fetch, so commands that never fetch do not pay for it. */
function undici(): Promise<Undici> {
  undiciLoading ??= import('undici').then(commonJsExports);
  return undiciLoading;
}

/** One connection pool per address policy, so that every connection it makes is checked. */
const policedAgents = new WeakMap<AddressPolicy, Agent>();

function agentFor(policy: AddressPolicy, { Agent }: Undici): Agent {
  let agent = policedAgents.get(policy);
  if (!agent) {
    agent = new Agent({ connect: { lookup: policedLookup(policy) } });
    policedAgents.set(policy, agent);
  }
  return agent;
}

const USER_AGENT = 'agent/0.1 (web tools of a scheduled-agent service)';

/**
 * GETs `url` with undici's fetch, following up to 20 redirects (each hop's address checked
 * against `addressPolicy`, when there is one), within a time limit that covers the body too,
 * reading at most `maxBytes` of it. Never throws: a failure to get an answer at all is
 * `{ok: false, problem}` with a short phrase (cancelled, timed out, connection refused, a
 * refused address …).
 */
export async function httpGet(url: URL, options: HttpGetOptions): Promise<HttpGetResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timeout]);
  const policy = options.addressPolicy;
  try {
    const library = await undici();
    const dispatcher = policy ? agentFor(policy, library) : undefined;
    let target = url;
    let response: Response;
    for (let hops = 0; ; hops += 1) {
      const literal = ipLiteralOf(target);
      if (policy && literal !== null && !policy(literal)) throw new AddressRefused(literal, literal);
      response = await library.fetch(target, {
        signal,
        redirect: 'manual',
        headers: { 'user-agent': USER_AGENT, ...options.headers },
        ...(dispatcher ? { dispatcher } : {}),
      });
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) break;
      await response.body?.cancel().catch(() => undefined);
      if (hops === MAX_REDIRECTS) return { ok: false, problem: `more than ${MAX_REDIRECTS} redirects` };
      target = new URL(location, target);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        return { ok: false, problem: `it redirects to a ${target.protocol.slice(0, -1)} URL, which is not fetched` };
      }
    }
    const [mediaType = '', ...parameters] = (response.headers.get('content-type') ?? '').split(';');
    const charset = parameters.map((parameter) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(parameter)?.[1]).find(Boolean);
    const answer = {
      status: response.status,
      statusText: response.statusText,
      url: target.href,
      mediaType: mediaType.trim().toLowerCase(),
      charset: charset ?? null,
    };
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: true, answer: { ...answer, body: Buffer.alloc(0), truncated: false } };
    }
    return { ok: true, answer: { ...answer, ...(await readCapped(response, options.maxBytes)) } };
  } catch (error) {
    // Refused before fetching (an address in the URL), or by the lookup, as fetch's cause.
    const refused = [error, causeOf(error)].find((each) => each instanceof AddressRefused);
    if (refused) return { ok: false, problem: refused.message, refusedAddress: true };
    if (options.signal.aborted) return { ok: false, problem: 'the run was cancelled' };
    if (timeout.aborted) return { ok: false, problem: `no complete answer within ${options.timeoutMs / 1000} s` };
    return { ok: false, problem: networkProblem(error) };
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  if (!response.body) return { body: Buffer.alloc(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { body: Buffer.concat(chunks), truncated: false };
    if (kept + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - kept));
      await reader.cancel().catch(() => undefined);
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(value);
    kept += value.length;
  }
}

/**
 * fetch says only "fetch failed"; its cause says what happened ("connect ECONNREFUSED …").
 * Read by shape, not instanceof: fetch's errors may come from another realm (test sandboxes).
 */
function networkProblem(error: unknown): string {
  return messageOf(causeOf(error)) ?? messageOf(error) ?? String(error);
}

function causeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
}

function messageOf(value: unknown): string | null {
  const message = typeof value === 'object' && value !== null ? (value as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message !== '' ? message : null;
}

/** Decodes a body by its declared charset, UTF-8 when none is declared or it is unknown. */
export function decodeBody(body: Buffer, charset: string | null): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
