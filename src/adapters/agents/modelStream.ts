import type { Dispatcher } from 'undici';
import type { EventSourceMessage } from 'eventsource-parser';
import { commonJsExports } from '../shared/commonJsModule.js';
import { ModelCallError } from '../../application/agent/ports/ChatModel.js';
import { brokenConnection, detailOf, httpStatusError, networkReason, retryAfterFrom } from './sdkErrors.js';

/*
 * One streamed model call over HTTP: a POST whose answer is Server-Sent Events (docs/adr/0018).
 * undici's `request` hands the body over as a Node stream and eventsource-parser cuts it into
 * events; nothing goes through web streams, which made a thousand streams cost twice the CPU
 * and three times the memory.
 */

/** What an error answer's body is read up to, for its message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface StreamedCall {
  /** The full URL of the call. */
  url: string;
  /** The provider's base URL, as messages name it. */
  endpoint: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  /** Called once the answer's 2xx status and headers are in, before its first event. */
  onResponseStarted?: () => void;
}

type Libraries = {
  request: typeof import('undici').request;
  /** The connection pools, taken in turn (POOL_SHARDS). */
  dispatchers: Dispatcher[];
  createParser: typeof import('eventsource-parser').createParser;
};
let loading: Promise<Libraries> | null = null;
/** The pool the next call takes. */
let nextPool = 0;

/**
 * How many connection pools the calls of a process share, taken in turn. undici's pool looks
 * through every connection it holds to a server for a free one at each call: with ten thousand
 * sessions in flight, each holding one, one pool made starting them quadratic (seconds of CPU).
 */
const POOL_SHARDS = 16;

/**
 * undici and the parser, loaded with the first call. The connection pools serve every call of
 * the process: they keep sockets to each model server alive between calls, with no bound on how
 * many are open to one server (each session in flight holds one).
 */
function libraries(): Promise<Libraries> {
  loading ??= Promise.all([import('undici').then(commonJsExports), import('eventsource-parser')]).then(([undici, parser]) => ({
    request: undici.request,
    dispatchers: Array.from({ length: POOL_SHARDS }, () => new undici.Agent({ keepAliveTimeout: 30_000, connections: null })),
    createParser: parser.createParser,
  }));
  return loading;
}

/** Loads undici and the parser ahead of the first call. */
export async function warmUpStreams(): Promise<void> {
  await libraries();
}

/**
 * The events of one streamed call, in order, as they arrive. Throws ModelCallError: the HTTP
 * status's kind for an answer other than 2xx (with its `Retry-After`), `unreachable` for a
 * connection that cannot be made or breaks off, `aborted` when the signal fired.
 */
export async function* serverSentEvents(call: StreamedCall): AsyncGenerator<EventSourceMessage> {
  const { request, dispatchers, createParser } = await libraries();
  const dispatcher = dispatchers[nextPool]!;
  nextPool = (nextPool + 1) % dispatchers.length;
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(call.url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...call.headers },
      body: JSON.stringify(call.body),
      signal: call.signal,
    });
  } catch (error) {
    throw failureOf(error, call, 'connecting');
  }
  if (answer.statusCode < 200 || answer.statusCode >= 300) throw await statusFailure(answer, call);
  call.onResponseStarted?.();
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  // Streaming, so that a character cut between two chunks comes out whole.
  const utf8 = new TextDecoder();
  try {
    for await (const bytes of answer.body as AsyncIterable<Uint8Array>) {
      parser.feed(utf8.decode(bytes, { stream: true }));
      while (events.length > 0) yield events.shift()!;
    }
  } catch (error) {
    throw failureOf(error, call, 'streaming');
  } finally {
    // A consumer that stopped early (an abort, an error event) lets the socket go.
    if (!answer.body.destroyed) answer.body.destroy();
  }
  parser.feed(utf8.decode());
  parser.reset({ consume: true });
  yield* events;
}

/** The error of an answer other than 2xx, with the provider's own message from its body. */
async function statusFailure(answer: Dispatcher.ResponseData, call: StreamedCall): Promise<ModelCallError> {
  let text = '';
  try {
    const utf8 = new TextDecoder();
    for await (const bytes of answer.body as AsyncIterable<Uint8Array>) {
      text += utf8.decode(bytes, { stream: true });
      if (text.length >= MAX_ERROR_BODY_BYTES) break;
    }
  } catch {
    // The status says enough.
  } finally {
    answer.body.destroy();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const header = (name: string) => {
    const value = answer.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const detail = detailOf(parsed, text.trim() || `HTTP ${answer.statusCode}`);
  return httpStatusError(call.endpoint, answer.statusCode, detail, retryAfterFrom(header));
}

function failureOf(error: unknown, call: StreamedCall, phase: 'connecting' | 'streaming'): ModelCallError {
  if (error instanceof ModelCallError) return error;
  if (call.signal.aborted) return new ModelCallError('aborted', `the call to ${call.endpoint} was cancelled`, { cause: error });
  if (phase === 'streaming') {
    const broken = brokenConnection(error, call.endpoint);
    if (broken) return broken;
  }
  return new ModelCallError('unreachable', `could not reach ${call.endpoint} (${networkReason(error)})`, { cause: error });
}
