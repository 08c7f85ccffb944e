import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, Tool as AnthropicTool } from '@anthropic-ai/sdk/resources/messages';
import { ModelCallError, type ChatModel, type ModelTurnRequest } from '../../application/agent/ports/ChatModel.js';
import { parseToolArguments, type ModelTurn, type TranscriptMessage } from '../../domain/agent/transcript.js';
import { tokenCount, type TokenCounts } from '../../domain/runs/usage.js';
import { modelCallErrorFrom } from './sdkErrors.js';

const ANTHROPIC_ERRORS = { APIError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError };

/** The API requires an upper bound on every answer. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192;

/** Sent as the key where a server needs none: the SDK insists on one. The header is then removed. */
const NO_KEY = 'no-key';

export interface AnthropicMessagesModelOptions {
  /** The API's base URL, e.g. `https://api.anthropic.com` (the SDK appends `/v1/messages`). */
  endpoint: string;
  /** Default {@link DEFAULT_ANTHROPIC_MAX_TOKENS}. */
  maxTokens?: number | null;
}

/**
 * The Anthropic Messages API through the official `@anthropic-ai/sdk`, always streaming. The
 * SDK's own retries are off (`maxRetries: 0`): the agent loop rotates keys and falls back to other
 * providers itself. Endpoint and key always come from the configuration, never from the SDK's
 * environment variables or credential files.
 */
export class AnthropicMessagesModel implements ChatModel {
  readonly endpoint: string;
  private readonly clients = new Map<string, Anthropic>();

  constructor(private readonly options: AnthropicMessagesModelOptions) {
    this.endpoint = options.endpoint;
  }

  async streamTurn(request: ModelTurnRequest): Promise<ModelTurn> {
    let text = '';
    const toolUses = new Map<number, { id: string; name: string; json: string; initialInput: unknown }>();
    /** The counts as the stream sent them, `message_start`'s then `message_delta`'s over them. */
    let reported: Record<string, unknown> | null = null;
    try {
      const stream = await this.clientFor(request.apiKey).messages.create(
        {
          model: request.model,
          max_tokens: this.options.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
          messages: toAnthropicMessages(request.messages),
          stream: true,
          ...(request.system === null ? {} : { system: request.system }),
          ...(request.tools.length > 0 ? { tools: request.tools.map(toAnthropicTool) } : {}),
        },
        { signal: request.signal },
      );
      // The SDK resolves a streaming request once a 2xx response's headers are in; any other status throws.
      request.onResponseStarted?.();
      for await (const event of stream) {
        request.onActivity();
        if (event.type === 'message_start') {
          reported = { ...(event.message.usage as unknown as Record<string, unknown>) };
        } else if (event.type === 'message_delta') {
          // Its counts are cumulative: each one it sends (output, and input on newer servers) replaces the one before.
          const delta = Object.entries(event.usage ?? {}).filter(([, count]) => typeof count === 'number');
          reported = { ...(reported ?? {}), ...Object.fromEntries(delta) };
        } else if (event.type === 'content_block_start') {
          const block = event.content_block;
          if (block.type === 'tool_use') {
            toolUses.set(event.index, { id: block.id, name: block.name, json: '', initialInput: block.input });
          } else if (block.type === 'text' && block.text) {
            text += block.text;
            request.onText(block.text);
          }
        } else if (event.type === 'content_block_delta') {
          const delta = event.delta;
          if (delta.type === 'text_delta') {
            text += delta.text;
            request.onText(delta.text);
          } else if (delta.type === 'input_json_delta') {
            const toolUse = toolUses.get(event.index);
            if (toolUse) toolUse.json += delta.partial_json;
          }
        }
      }
    } catch (error) {
      throw modelCallErrorFrom(error, ANTHROPIC_ERRORS, this.endpoint, request.signal);
    }
    // The SDK ends a stream quietly when it is aborted; an abort is not an answer.
    if (request.signal.aborted) throw new ModelCallError('aborted', `the call to ${this.endpoint} was cancelled`);
    const toolCalls = [...toolUses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, use]) => ({
        id: use.id,
        name: use.name,
        arguments: use.json !== '' ? use.json : JSON.stringify(use.initialInput ?? {}),
      }));
    return { text, toolCalls, usage: reported === null ? null : usageOf(reported) };
  }

  private clientFor(apiKey: string | null): Anthropic {
    const cacheKey = apiKey ?? '';
    let client = this.clients.get(cacheKey);
    if (!client) {
      client = new Anthropic({
        apiKey: apiKey ?? NO_KEY,
        baseURL: this.endpoint,
        maxRetries: 0,
        ...(apiKey === null ? { defaultHeaders: { 'X-Api-Key': null, Authorization: null } } : {}),
      });
      this.clients.set(cacheKey, client);
    }
    return client;
  }
}

/**
 * A turn's usage: its input is uncached input, cache reads and cache writes together
 * (docs/runs.md); cache reads are the cached ones.
 */
function usageOf(counts: Record<string, unknown>): TokenCounts {
  const cacheRead = tokenCount(counts.cache_read_input_tokens);
  return {
    input_tokens: tokenCount(counts.input_tokens) + cacheRead + tokenCount(counts.cache_creation_input_tokens),
    output_tokens: tokenCount(counts.output_tokens),
    cached_input_tokens: cacheRead,
  };
}

function toAnthropicMessages(messages: readonly TranscriptMessage[]): MessageParam[] {
  const converted: MessageParam[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      converted.push({ role: 'user', content: anthropicUserContent(message) });
    } else if (message.role === 'assistant') {
      const content: ContentBlockParam[] = [];
      if (message.text !== '') content.push({ type: 'text', text: message.text });
      for (const call of message.toolCalls) {
        const parsed = parseToolArguments(call.arguments);
        content.push({ type: 'tool_use', id: toolUseId(call.id), name: call.name, input: parsed.ok ? parsed.args : {} });
      }
      // The API refuses an empty assistant message; one without text or calls says nothing anyway.
      if (content.length > 0) converted.push({ role: 'assistant', content });
    } else {
      converted.push({
        role: 'user',
        content: message.results.map((result) => ({
          type: 'tool_result' as const,
          tool_use_id: toolUseId(result.callId),
          content: result.content,
          ...(result.isError ? { is_error: true } : {}),
        })),
      });
    }
  }
  return converted;
}

/** Text alone as a string; with images, one base64 `image` block per image, then the text (as the API's guide advises). */
function anthropicUserContent(message: Extract<TranscriptMessage, { role: 'user' }>): string | ContentBlockParam[] {
  const images = message.images ?? [];
  if (images.length === 0) return message.text;
  return [
    ...images.map((image): ContentBlockParam => ({
      type: 'image',
      source: { type: 'base64', media_type: image.mediaType, data: image.base64 },
    })),
    { type: 'text', text: message.text },
  ];
}

/** Ids from another provider (after a fallback) may hold characters this API refuses. */
function toolUseId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function toAnthropicTool(spec: { name: string; description: string; parameters: Record<string, unknown> }): AnthropicTool {
  return { name: spec.name, description: spec.description, input_schema: spec.parameters as AnthropicTool['input_schema'] };
}
