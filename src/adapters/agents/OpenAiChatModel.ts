import { randomBytes } from 'node:crypto';
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { ModelCallError, type ChatModel, type ModelTurnRequest } from '../../application/agent/ports/ChatModel.js';
import type { ModelTurn, RequestedToolCall, TranscriptMessage } from '../../domain/agent/transcript.js';
import { tokenCount, type TokenCounts } from '../../domain/runs/usage.js';
import { serverSentEvents, warmUpStreams } from './modelStream.js';
import { detailOf, midStreamError } from './sdkErrors.js';

export interface OpenAiChatModelOptions {
  /** The API's base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  endpoint: string;
  /** Sent as `max_tokens` when set; otherwise the server's default applies. */
  maxTokens?: number | null;
  /** Where `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` are read, for OpenAI's own endpoint only; none without. */
  environment?: NodeJS.ProcessEnv;
}

/**
 * The OpenAI Chat Completions API, always streaming. Anything that speaks that API works:
 * OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio.
 *
 * Its wire shapes are the official `openai` package's types; the call itself goes through
 * modelStream.ts (undici and an SSE parser), which holds a thousand streams at a third of the
 * memory the SDK took (docs/adr/0018). Nothing is retried here: the agent loop rotates keys,
 * waits out rate limits and falls back to other providers itself. Endpoint and key always come
 * from the configuration, never from `OPENAI_BASE_URL` or `OPENAI_API_KEY`.
 */
export class OpenAiChatModel implements ChatModel {
  readonly endpoint: string;
  /** Sent with every call besides the key. */
  private readonly headers: Record<string, string>;

  constructor(private readonly options: OpenAiChatModelOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    // OPENAI_ORG_ID and OPENAI_PROJECT_ID belong to OpenAI; other servers are not sent them.
    const env = options.environment ?? {};
    this.headers = isOpenAi(this.endpoint)
      ? {
          ...(env.OPENAI_ORG_ID ? { 'openai-organization': env.OPENAI_ORG_ID } : {}),
          ...(env.OPENAI_PROJECT_ID ? { 'openai-project': env.OPENAI_PROJECT_ID } : {}),
        }
      : {};
  }

  warmUp(): Promise<void> {
    return warmUpStreams();
  }

  async streamTurn(request: ModelTurnRequest): Promise<ModelTurn> {
    const body: ChatCompletionCreateParamsStreaming = {
      model: request.model,
      messages: toOpenAiMessages(request.system, request.messages),
      stream: true,
      // The last chunk then carries the turn's usage (`choices` empty).
      stream_options: { include_usage: true },
      ...(request.tools.length > 0 ? { tools: request.tools.map(toOpenAiTool) } : {}),
      ...(this.options.maxTokens ? { max_tokens: this.options.maxTokens } : {}),
    };
    let text = '';
    const calls = new Map<number, RequestedToolCall>();
    let usage: TokenCounts | null = null;
    const events = serverSentEvents({
      url: `${this.endpoint}/chat/completions`,
      endpoint: this.endpoint,
      headers: { ...this.headers, ...(request.apiKey === null ? {} : { authorization: `Bearer ${request.apiKey}` }) },
      body,
      signal: request.signal,
      onResponseStarted: () => request.onResponseStarted?.(),
    });
    for await (const event of events) {
      request.onActivity();
      if (event.data.startsWith('[DONE]')) break;
      const chunk = parseChunk(event.data, this.endpoint);
      if (chunk.usage) usage = usageOf(chunk.usage);
      const delta = chunk.choices?.[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        text += delta.content;
        request.onText(delta.content);
      }
      for (const fragment of delta.tool_calls ?? []) {
        const index = slotOf(fragment, calls);
        const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
        // Ids and names arrive whole (some servers repeat them); arguments arrive in pieces.
        if (fragment.id) call.id = fragment.id;
        if (fragment.function?.name) call.name = fragment.function.name;
        if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
        calls.set(index, call);
      }
    }
    // A stream cut short by an abort is not an answer.
    if (request.signal.aborted) throw new ModelCallError('aborted', `the call to ${this.endpoint} was cancelled`);
    const toolCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ ...call, id: call.id || `call_${randomBytes(6).toString('hex')}` }));
    return { text, toolCalls, usage };
  }
}

/** One streamed chunk; an error the server sends inside the stream fails the call as the server's. */
function parseChunk(data: string, endpoint: string): ChatCompletionChunk {
  let chunk: ChatCompletionChunk & { error?: unknown };
  try {
    chunk = JSON.parse(data) as ChatCompletionChunk & { error?: unknown };
  } catch (error) {
    throw midStreamError(endpoint, `an event that is not JSON: ${data.slice(0, 80)}`, error);
  }
  if (chunk.error) throw midStreamError(endpoint, detailOf(chunk.error, 'an error event'));
  return chunk;
}

/** `prompt_tokens` counts the cached ones too (`prompt_tokens_details.cached_tokens`). */
function usageOf(usage: {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
}): TokenCounts {
  return {
    input_tokens: tokenCount(usage.prompt_tokens),
    output_tokens: tokenCount(usage.completion_tokens),
    cached_input_tokens: tokenCount(usage.prompt_tokens_details?.cached_tokens),
  };
}

function isOpenAi(endpoint: string): boolean {
  try {
    return new URL(endpoint).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

/**
 * Which call a streamed fragment belongs to: its `index`. Some servers (older Ollama) leave the
 * index out and send each call whole; then a new id starts a new call and anything else
 * continues the last one.
 */
function slotOf(fragment: { index?: number; id?: string }, calls: ReadonlyMap<number, RequestedToolCall>): number {
  if (typeof fragment.index === 'number') return fragment.index;
  const last = calls.size - 1;
  const continuesLast = last >= 0 && (!fragment.id || calls.get(last)?.id === fragment.id);
  return continuesLast ? last : calls.size;
}

function toOpenAiMessages(system: string | null, messages: readonly TranscriptMessage[]): ChatCompletionMessageParam[] {
  const converted: ChatCompletionMessageParam[] = system === null ? [] : [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'user') {
      converted.push({ role: 'user', content: openAiUserContent(message) });
    } else if (message.role === 'assistant') {
      converted.push({
        role: 'assistant',
        content: message.text === '' && message.toolCalls.length > 0 ? null : message.text,
        ...(message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      });
    } else {
      for (const result of message.results) {
        converted.push({ role: 'tool', tool_call_id: result.callId, content: result.content });
      }
    }
  }
  return converted;
}

/** Text alone as a string; with images, a text part then one `image_url` part per image, as a data URL. */
function openAiUserContent(message: Extract<TranscriptMessage, { role: 'user' }>): string | ChatCompletionContentPart[] {
  const images = message.images ?? [];
  if (images.length === 0) return message.text;
  return [
    { type: 'text', text: message.text },
    ...images.map((image): ChatCompletionContentPart => ({
      type: 'image_url',
      image_url: { url: `data:${image.mediaType};base64,${image.base64}` },
    })),
  ];
}

function toOpenAiTool(spec: { name: string; description: string; parameters: Record<string, unknown> }): ChatCompletionFunctionTool {
  return { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
}
