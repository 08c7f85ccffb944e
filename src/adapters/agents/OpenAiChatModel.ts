import { randomBytes } from 'node:crypto';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { ModelCallError, type ChatModel, type ModelTurnRequest } from '../../application/agent/ports/ChatModel.js';
import type { ModelTurn, RequestedToolCall, TranscriptMessage } from '../../domain/agent/transcript.js';
import { tokenCount, type TokenCounts } from '../../domain/runs/usage.js';
import { modelCallErrorFrom } from './sdkErrors.js';

const OPENAI_ERRORS = { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError };

/** Sent as the key where a server needs none: the SDK insists on one. The header is then removed. */
const NO_KEY = 'no-key';

export interface OpenAiChatModelOptions {
  /** The API's base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  endpoint: string;
  /** Sent as `max_tokens` when set; otherwise the server's default applies. */
  maxTokens?: number | null;
}

/**
 * The OpenAI Chat Completions API through the official `openai` SDK, always streaming. Anything
 * that speaks that API works: OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio.
 *
 * The SDK's own retries are off (`maxRetries: 0`): the agent loop rotates keys and falls back to
 * other providers itself. Environment variables the SDK would read (`OPENAI_BASE_URL`,
 * `OPENAI_API_KEY` …) are not used: endpoint and key always come from the configuration.
 */
export class OpenAiChatModel implements ChatModel {
  readonly endpoint: string;
  private readonly clients = new Map<string, OpenAI>();

  constructor(private readonly options: OpenAiChatModelOptions) {
    this.endpoint = options.endpoint;
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
    try {
      const stream = await this.clientFor(request.apiKey).chat.completions.create(body, { signal: request.signal });
      // The SDK resolves a streaming request once a 2xx response's headers are in; any other status throws.
      request.onResponseStarted?.();
      for await (const chunk of stream) {
        request.onActivity();
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
    } catch (error) {
      throw modelCallErrorFrom(error, OPENAI_ERRORS, this.endpoint, request.signal);
    }
    // The SDK ends a stream quietly when it is aborted; an abort is not an answer.
    if (request.signal.aborted) throw new ModelCallError('aborted', `the call to ${this.endpoint} was cancelled`);
    const toolCalls = [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ ...call, id: call.id || `call_${randomBytes(6).toString('hex')}` }));
    return { text, toolCalls, usage };
  }

  private clientFor(apiKey: string | null): OpenAI {
    const cacheKey = apiKey ?? '';
    let client = this.clients.get(cacheKey);
    if (!client) {
      client = new OpenAI({
        apiKey: apiKey ?? NO_KEY,
        baseURL: this.endpoint,
        // OPENAI_ORG_ID and OPENAI_PROJECT_ID belong to OpenAI; other servers are not sent them.
        ...(isOpenAi(this.endpoint) ? {} : { organization: null, project: null }),
        maxRetries: 0,
        ...(apiKey === null ? { defaultHeaders: { Authorization: null } } : {}),
      });
      this.clients.set(cacheKey, client);
    }
    return client;
  }
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
