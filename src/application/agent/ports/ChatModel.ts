import type { ModelCallFailure } from '../../../domain/agent/providerChain.js';
import type { ModelTurn, TranscriptMessage } from '../../../domain/agent/transcript.js';
import type { ToolSpec } from './Tool.js';

/*
 * The seam between the session loop (RunAgentSession) and one LLM wire format. The session
 * keeps the conversation in the provider-neutral transcript (src/domain/agent/transcript.ts)
 * and each format translates it on every turn.
 */

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
  /**
   * Called once when the response started: its headers arrived with a 2xx status, before the
   * first streamed event is read. The provider's throttle counts such calls as served
   * (ProviderThrottle); a call that fails before, a 429 above all, never calls it.
   */
  onResponseStarted?: () => void;
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
  /** Loads what the first call needs (its HTTP client), so that a burst of first calls does not wait for it. Optional. */
  warmUp?(): Promise<void>;
}

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
