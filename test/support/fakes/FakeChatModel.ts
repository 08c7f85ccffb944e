import { ModelCallError, type ChatModel, type ModelTurnRequest } from '../../../src/application/agent/ports/ChatModel.js';
import type { ModelCallFailure } from '../../../src/domain/agent/providerChain.js';
import type { ModelTurn, RequestedToolCall, TranscriptMessage } from '../../../src/domain/agent/transcript.js';
import type { TokenCounts } from '../../../src/domain/runs/usage.js';

/** One scripted answer to a turn. */
export type FakeTurn =
  | { kind: 'answer'; text: string }
  | { kind: 'tools'; calls: RequestedToolCall[] }
  | { kind: 'failure'; failure: ModelCallFailure; message: string; status?: number; retryAfterMs?: number | null }
  /** Streams nothing until the run's signal aborts, then fails as the SDK adapters do. */
  | { kind: 'stall' };

export const turns = {
  answer: (text: string): FakeTurn => ({ kind: 'answer', text }),
  tools: (...calls: Array<{ name: string; arguments?: string | Record<string, unknown>; id?: string }>): FakeTurn => ({
    kind: 'tools',
    calls: calls.map((call, index) => ({
      id: call.id ?? `call_${index + 1}`,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
    })),
  }),
  failure: (
    failure: ModelCallFailure,
    message = `${failure} failure`,
    details: { status?: number; retryAfterMs?: number | null } = {},
  ): FakeTurn => ({
    kind: 'failure',
    failure,
    message,
    ...details,
  }),
  stall: (): FakeTurn => ({ kind: 'stall' }),
};

/** What the fake saw of one turn request. */
export interface SeenTurn {
  model: string;
  apiKey: string | null;
  system: string | null;
  /** A copy of the transcript as it was at the call. */
  messages: TranscriptMessage[];
  tools: string[];
}

/**
 * A ChatModel that answers from a script, one entry per turn, and records each request. Keeps
 * the port's promises that the session relies on: every failure is a ModelCallError, an abort
 * through the signal fails the turn as `aborted`, and it never retries.
 */
export class FakeChatModel implements ChatModel {
  readonly endpoint = 'fake://model';
  readonly seen: SeenTurn[] = [];
  /** What each turn that streams to its end reports it spent; null (the default): nothing. */
  usage: TokenCounts | null = null;
  private readonly script: FakeTurn[];
  private current: ModelTurnRequest | null = null;

  constructor(...script: FakeTurn[]) {
    this.script = script;
  }

  /** Streams a token into the turn under way (activity for the idle budget). */
  stream(delta: string): void {
    this.current?.onActivity();
    this.current?.onText(delta);
  }

  async streamTurn(request: ModelTurnRequest): Promise<ModelTurn> {
    this.seen.push({
      model: request.model,
      apiKey: request.apiKey,
      system: request.system,
      messages: structuredClone([...request.messages]),
      tools: request.tools.map((tool) => tool.name),
    });
    const next = this.script.shift();
    if (!next) throw new ModelCallError('server', 'the fake model has no scripted turn left');
    if (request.signal.aborted) throw new ModelCallError('aborted', 'the request was aborted');
    switch (next.kind) {
      case 'answer':
        request.onResponseStarted?.();
        request.onActivity();
        request.onText(next.text);
        return { text: next.text, toolCalls: [], ...(this.usage ? { usage: { ...this.usage } } : {}) };
      case 'tools':
        request.onResponseStarted?.();
        request.onActivity();
        return { text: '', toolCalls: next.calls, ...(this.usage ? { usage: { ...this.usage } } : {}) };
      case 'failure':
        throw new ModelCallError(next.failure, next.message, { status: next.status, retryAfterMs: next.retryAfterMs });
      case 'stall':
        request.onResponseStarted?.();
        this.current = request;
        return new Promise<ModelTurn>((_resolve, reject) => {
          request.signal.addEventListener('abort', () => reject(new ModelCallError('aborted', 'the request was aborted')), { once: true });
        });
    }
  }
}
