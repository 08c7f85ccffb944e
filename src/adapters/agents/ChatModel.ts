import type { ToolSpec } from '../tools/Tool.js';

/*
 * The seam between the agent loop (LlmAgentRunner) and one LLM wire format. The loop keeps the
 * conversation in the provider-neutral shape below and each format translates it on every turn,
 * so that a fallback provider of the other format can take over in the middle of a run.
 */

/** A message of a run's conversation, in no provider's format. */
export type TranscriptMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: readonly RequestedToolCall[] }
  | { role: 'tool'; results: readonly ToolCallResult[] };

/** A tool call as the model asked for it. */
export interface RequestedToolCall {
  id: string;
  name: string;
  /** The arguments as the model sent them: JSON text, possibly malformed. */
  arguments: string;
}

/** What goes back to the model for one tool call. */
export interface ToolCallResult {
  callId: string;
  name: string;
  content: string;
  /** The call could not run (bad arguments, unknown tool); the content says why. */
  isError: boolean;
}

export interface ModelTurnRequest {
  model: string;
  /** The key for this call; null for a provider that needs none. */
  apiKey: string | null;
  /** System context (the memory documents); null when there is none. */
  system: string | null;
  messages: readonly TranscriptMessage[];
  /** Tools the model may call; none means the request offers no tools at all. */
  tools: readonly ToolSpec[];
  signal: AbortSignal;
  /** Called for every streamed event (a token, a tool-call fragment): the idle budget's activity. */
  onActivity: () => void;
  /** Receives the answer's text as it streams. */
  onText: (delta: string) => void;
}

/** One streamed model turn: its text and the tool calls it asks for (none = a final answer). */
export interface ModelTurn {
  text: string;
  toolCalls: RequestedToolCall[];
}

/** One LLM API format at one endpoint. */
export interface ChatModel {
  /** The base URL requests go to, for messages. */
  readonly endpoint: string;
  /**
   * Streams one turn to its end. Throws ModelCallError for every failure of the call, including
   * an abort through `signal`; never retries (the loop decides about retries and fallbacks).
   */
  streamTurn(request: ModelTurnRequest): Promise<ModelTurn>;
}

/**
 * How a model call failed, in the terms the loop decides on:
 * - `rate_limited`: HTTP 429; another key of the pool may be tried at once;
 * - `unreachable`: no connection, or it broke off; a fallback provider may be tried;
 * - `server`: HTTP 5xx or an error event mid-stream; a fallback provider may be tried;
 * - `auth`: HTTP 401/403; the run fails at once, since every retry would fail the same way;
 * - `rejected`: any other HTTP 4xx (unknown model, bad request); the run fails;
 * - `aborted`: the run's signal fired (idle timeout or cancellation).
 */
export type ModelCallFailure = 'rate_limited' | 'unreachable' | 'server' | 'auth' | 'rejected' | 'aborted';

/** A failed model call. `message` starts in lower case: it is embedded in longer sentences. */
export class ModelCallError extends Error {
  constructor(
    readonly kind: ModelCallFailure,
    message: string,
    readonly details: { status?: number; retryAfterMs?: number | null; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ModelCallError';
  }
}

/** The memory documents as one system text, each under its name; null when there are none. */
export function systemText(documents: ReadonlyArray<{ name: string; content: string }>): string | null {
  if (documents.length === 0) return null;
  return documents.map((document) => `# Memory: ${document.name}\n\n${document.content.trimEnd()}`).join('\n\n');
}

/** A tool call's arguments as the object a tool takes, or why they are not one. */
export function parseToolArguments(text: string): { ok: true; args: Record<string, unknown> } | { ok: false; problem: string } {
  // Some servers send no text at all for a call without arguments.
  if (text.trim() === '') return { ok: true, args: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `the arguments are not valid JSON (${(error as Error).message})` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: 'the arguments must be a JSON object' };
  }
  return { ok: true, args: parsed as Record<string, unknown> };
}
