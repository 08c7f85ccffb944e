import type { ModelTurn, RequestedToolCall, ToolCallResult } from '../../domain/agent/transcript.js';
import { cutToolResult, SecretScrubber, transcriptUsageOf, type NamedSecret, type RunTranscript } from '../../domain/runs/RunTranscript.js';
import type { Clock } from '../ports/Clock.js';

/** What a session needs to keep a transcript: the time of day, and the credential values it must never hold. */
export interface TranscriptSettings {
  clock: Clock;
  /** Every configured credential value, named; each is replaced by `[redacted <name>]` wherever it shows. */
  secrets: readonly NamedSecret[];
}

/**
 * Keeps one session's transcript (docs/runs.md, Transcripts): each model turn and each tool call
 * as it ends, with when it started and ended, every text scrubbed of the credentials and each
 * tool result cut to its first 4 KB.
 */
export class TranscriptRecorder {
  private readonly kept: RunTranscript = [];
  private readonly scrubber: SecretScrubber;

  constructor(private readonly settings: TranscriptSettings) {
    this.scrubber = new SecretScrubber(settings.secrets);
  }

  /** The time an entry starts, ISO 8601 UTC. */
  now(): string {
    return this.settings.clock.now().toISOString();
  }

  /** The entries so far, oldest first (a copy). */
  get entries(): RunTranscript {
    return [...this.kept];
  }

  modelTurn(startedAt: string, model: string, turn: ModelTurn): void {
    const usage = transcriptUsageOf((turn as { usage?: unknown }).usage);
    this.kept.push({
      type: 'model_turn',
      started_at: startedAt,
      ended_at: this.now(),
      model,
      text: this.scrubber.scrub(turn.text),
      tool_calls: turn.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: this.scrubber.scrub(call.arguments) })),
      ...(usage ? { usage } : {}),
    });
  }

  toolCall(startedAt: string, call: RequestedToolCall, result: ToolCallResult): void {
    this.kept.push({
      type: 'tool_call',
      started_at: startedAt,
      ended_at: this.now(),
      call_id: call.id,
      name: call.name,
      arguments: this.scrubber.scrub(call.arguments),
      ...cutToolResult(this.scrubber.scrub(result.content)),
      is_error: result.isError,
    });
  }
}
