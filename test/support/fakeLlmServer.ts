import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server that speaks the two LLM wire formats the agent uses, for tests that drive
 * the real SDK clients end to end:
 * - OpenAI Chat Completions: `POST /v1/chat/completions` (base URL {@link FakeLlmServer.openAiBaseUrl});
 * - Anthropic Messages: `POST /v1/messages` (base URL {@link FakeLlmServer.anthropicBaseUrl}).
 *
 * Each request takes the next scripted reply (see {@link replies}), in the format of the path it
 * came to, and is recorded with its headers, body and API key. When the script is used up the
 * server answers with `always` if set, else HTTP 500 "no scripted reply left".
 *
 * Every streamed reply reports its usage the way its format does ({@link ScriptedUsage}): the
 * reply's own (`replies.withUsage`), else the server's {@link FakeLlmServer.usage}. OpenAI sends
 * it in a last chunk with empty `choices` when the request asks for it
 * (`stream_options.include_usage`); Anthropic in `message_start` (input and cache) and
 * `message_delta` (output).
 */

export type LlmWireFormat = 'openai' | 'anthropic';

export interface ScriptedToolCall {
  /** Default `call_<n>` (OpenAI) or `toolu_<n>` (Anthropic). */
  id?: string;
  name: string;
  /** An object is sent as its JSON; a string is sent as it is, so it may be malformed on purpose. */
  arguments: string | Record<string, unknown>;
}

/**
 * What a reply reports it spent, in the agent's terms: `input_tokens` counts every prompt token,
 * cached ones included. OpenAI sends them as `prompt_tokens` and `prompt_tokens_details.cached_tokens`;
 * Anthropic apart, as `input_tokens` (the rest), `cache_read_input_tokens` (the cached ones) and
 * `cache_creation_input_tokens` (`cache_creation_input_tokens` of these, written to the cache).
 */
export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens?: number;
  /** Anthropic only: input tokens written to the cache (part of `input_tokens`, not cached ones). */
  cache_creation_input_tokens?: number;
}

export type ScriptedReply = (
  | { kind: 'text'; chunks: string[] }
  | { kind: 'tool_calls'; text: string; calls: ScriptedToolCall[]; whole?: boolean }
  | { kind: 'error'; status: number; message: string; headers: Record<string, string> }
  | { kind: 'stall'; chunks: string[] }
  | { kind: 'stream_error'; chunks: string[]; message: string }
) & { usage?: ScriptedUsage | null };

/** What every streamed reply reports unless told otherwise. */
export const DEFAULT_USAGE: ScriptedUsage = { input_tokens: 12, output_tokens: 5, cached_input_tokens: 0 };

export const replies = {
  /** A streamed answer, one SSE event per chunk. */
  text: (...chunks: string[]): ScriptedReply => ({ kind: 'text', chunks }),
  /** A streamed turn that calls tools (arguments arrive in two fragments each). */
  toolCalls: (...calls: ScriptedToolCall[]): ScriptedReply => ({ kind: 'tool_calls', text: '', calls }),
  /**
   * Tool calls the way older Ollama versions stream them in the OpenAI format: each call whole in
   * one chunk, without `index`. (The Anthropic format sends them as `toolCalls` does.)
   */
  toolCallsWithoutIndex: (...calls: ScriptedToolCall[]): ScriptedReply => ({ kind: 'tool_calls', text: '', calls, whole: true }),
  /** An HTTP error with the format's error body. */
  error: (status: number, message = `error ${status}`, headers: Record<string, string> = {}): ScriptedReply => ({
    kind: 'error',
    status,
    message,
    headers,
  }),
  /** HTTP 429, with `Retry-After` when given (seconds or an HTTP date). */
  rateLimited: (retryAfter?: string): ScriptedReply =>
    replies.error(429, 'Rate limit reached', retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
  /** HTTP 429 with the `retry-after-ms` header some providers send (milliseconds), and a `Retry-After` in seconds when given. */
  rateLimitedMs: (retryAfterMs: number, retryAfter?: string): ScriptedReply =>
    replies.error(429, 'Rate limit reached', {
      'retry-after-ms': String(retryAfterMs),
      ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
    }),
  /** Streams these chunks, then sends nothing more and never ends the response. */
  stall: (...chunks: string[]): ScriptedReply => ({ kind: 'stall', chunks }),
  /** Streams these chunks, then an error event in the format's own form (as an overloaded server does), and ends. */
  errorInStream: (message: string, ...chunks: string[]): ScriptedReply => ({ kind: 'stream_error', chunks, message }),
  /** `reply`, reporting `usage` (null: reporting none). */
  withUsage: (reply: ScriptedReply, usage: ScriptedUsage | null): ScriptedReply => ({ ...reply, usage }),
};

export interface RecordedRequest {
  format: LlmWireFormat;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, any>;
  /** The key sent (`Authorization: Bearer …` or `x-api-key`), or null. */
  apiKey: string | null;
}

export class FakeLlmServer {
  readonly requests: RecordedRequest[] = [];
  /** Used when the script is used up. */
  always: ScriptedReply | null = null;
  /** What each streamed reply without its own usage reports; null: none. */
  usage: ScriptedUsage | null = DEFAULT_USAGE;
  private readonly script: ScriptedReply[] = [];
  private readonly open = new Set<ServerResponse>();
  private ids = 0;
  private flying = 0;
  private peak = 0;
  /** While holding: the answers waiting to be sent. */
  private held: Array<() => void> | null = null;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeLlmServer> {
    const server = createServer();
    const fake = new FakeLlmServer(server);
    server.on('request', (request, response) => {
      fake.track(response);
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => fake.answer(request.url ?? '', request.headers, Buffer.concat(chunks).toString('utf8'), response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get openAiBaseUrl(): string {
    return `${this.url}/v1`;
  }

  get anthropicBaseUrl(): string {
    return this.url;
  }

  /** Queues replies, answered in order. */
  reply(...replies: ScriptedReply[]): this {
    this.script.push(...replies);
    return this;
  }

  async close(): Promise<void> {
    for (const response of this.open) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(url: string, headers: IncomingHttpHeaders, text: string, response: ServerResponse): void {
    const format: LlmWireFormat | null = url.startsWith('/v1/chat/completions')
      ? 'openai'
      : url.startsWith('/v1/messages')
        ? 'anthropic'
        : null;
    if (format === null) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${url}` } }));
      return;
    }
    let body: Record<string, any> = {};
    try {
      body = JSON.parse(text) as Record<string, any>;
    } catch {
      // Recorded as an empty body; the test will see it.
    }
    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1] ?? null;
    const apiKey = format === 'openai' ? bearer : ((headers['x-api-key'] as string | undefined) ?? bearer);
    this.requests.push({ format, headers, body, apiKey });
    const reply = this.script.shift() ?? this.always ?? replies.error(500, 'no scripted reply left');
    const model = String(body.model ?? 'model');
    if (reply.kind === 'error') {
      this.sendError(format, reply, response);
      return;
    }
    if (this.held) {
      this.held.push(() => this.stream(reply, format, model, body, response));
      return;
    }
    this.stream(reply, format, model, body, response);
  }

  /** Requests open now, from their arrival to the end of their answer. */
  get inFlight(): number {
    return this.flying;
  }

  /** The most requests that were open at once. */
  get peakInFlight(): number {
    return this.peak;
  }

  /** From now on, answers wait (their requests stay open) until `release()`. */
  hold(): this {
    this.held ??= [];
    return this;
  }

  /** Sends the held answers and stops holding. */
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const send of held) send();
  }

  private track(response: ServerResponse): void {
    this.flying += 1;
    this.peak = Math.max(this.peak, this.flying);
    response.on('close', () => (this.flying -= 1));
  }

  private stream(
    reply: Exclude<ScriptedReply, { kind: 'error' }>,
    format: LlmWireFormat,
    model: string,
    body: Record<string, any>,
    response: ServerResponse,
  ): void {
    this.open.add(response);
    response.on('close', () => this.open.delete(response));
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const usage = reply.usage === undefined ? this.usage : reply.usage;
    const events =
      format === 'openai'
        ? this.openAiEvents(reply, model, body.stream_options?.include_usage === true ? usage : null)
        : this.anthropicEvents(reply, model, usage);
    for (const event of events) response.write(event);
    if (reply.kind !== 'stall') response.end();
  }

  private sendError(format: LlmWireFormat, reply: Extract<ScriptedReply, { kind: 'error' }>, response: ServerResponse): void {
    const errorBody =
      format === 'openai'
        ? { error: { message: reply.message, type: reply.status === 429 ? 'rate_limit_exceeded' : 'error', code: null } }
        : { type: 'error', error: { type: reply.status === 429 ? 'rate_limit_error' : 'api_error', message: reply.message } };
    response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(errorBody));
  }

  private openAiEvents(reply: Exclude<ScriptedReply, { kind: 'error' }>, model: string, usage: ScriptedUsage | null): string[] {
    const id = `chatcmpl-${(this.ids += 1)}`;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const events = [chunk({ role: 'assistant', content: '' })];
    if (reply.kind === 'text' || reply.kind === 'stall' || reply.kind === 'stream_error') {
      events.push(...reply.chunks.map((content) => chunk({ content })));
      if (reply.kind === 'stall') return events;
      if (reply.kind === 'stream_error')
        return [...events, `data: ${JSON.stringify({ error: { message: reply.message, type: 'server_error' } })}\n\n`];
      events.push(chunk({}, 'stop'));
    } else {
      if (reply.text) events.push(chunk({ content: reply.text }));
      reply.calls.forEach((call, index) => {
        const args = argumentsText(call);
        const half = Math.floor(args.length / 2);
        const callId = call.id ?? `call_${(this.ids += 1)}`;
        if (reply.whole) {
          events.push(chunk({ tool_calls: [{ id: callId, type: 'function', function: { name: call.name, arguments: args } }] }));
          return;
        }
        events.push(chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }] }));
        events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
        events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
      });
      events.push(chunk({}, 'tool_calls'));
    }
    if (usage) {
      const counts = {
        prompt_tokens: usage.input_tokens,
        completion_tokens: usage.output_tokens,
        total_tokens: usage.input_tokens + usage.output_tokens,
        prompt_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
      };
      events.push(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage: counts })}\n\n`);
    }
    events.push('data: [DONE]\n\n');
    return events;
  }

  private anthropicEvents(reply: Exclude<ScriptedReply, { kind: 'error' }>, model: string, usage: ScriptedUsage | null): string[] {
    const event = (data: Record<string, unknown>) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
    const cached = usage?.cached_input_tokens ?? 0;
    const created = usage?.cache_creation_input_tokens ?? 0;
    const startUsage = usage
      ? {
          input_tokens: usage.input_tokens - cached - created,
          cache_read_input_tokens: cached,
          cache_creation_input_tokens: created,
          output_tokens: 1,
        }
      : { input_tokens: 0, output_tokens: 0 };
    const events = [
      event({
        type: 'message_start',
        message: {
          id: `msg_${(this.ids += 1)}`,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: startUsage,
        },
      }),
    ];
    let index = 0;
    const text = reply.kind === 'tool_calls' ? (reply.text ? [reply.text] : []) : reply.chunks;
    if (text.length > 0 || reply.kind !== 'tool_calls') {
      events.push(event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      events.push(...text.map((piece) => event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } })));
      if (reply.kind === 'stall') return events;
      if (reply.kind === 'stream_error')
        return [...events, event({ type: 'error', error: { type: 'overloaded_error', message: reply.message } })];
      events.push(event({ type: 'content_block_stop', index }));
      index += 1;
    }
    if (reply.kind === 'tool_calls') {
      for (const call of reply.calls) {
        const args = argumentsText(call);
        const half = Math.floor(args.length / 2);
        const id = call.id ?? `toolu_${(this.ids += 1)}`;
        events.push(event({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: call.name, input: {} } }));
        for (const part of [args.slice(0, half), args.slice(half)]) {
          events.push(event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } }));
        }
        events.push(event({ type: 'content_block_stop', index }));
        index += 1;
      }
    }
    const stopReason = reply.kind === 'tool_calls' ? 'tool_use' : 'end_turn';
    events.push(
      event({
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage?.output_tokens ?? 0 },
      }),
    );
    events.push(event({ type: 'message_stop' }));
    return events;
  }
}

function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** A base URL on this machine where nothing listens: connections to it are refused. */
export async function unreachableBaseUrl(path = '/v1'): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}${path}`;
}
