/*
 * A run's transcript (docs/runs.md, Transcripts): what the agent did between the prompt and the
 * answer, as the ledger keeps it. Every model turn (its text, the tool calls it asked for and its
 * token usage) and every tool call (its arguments and its result, cut to TOOL_RESULT_LIMIT_BYTES),
 * each with its start and end. Nothing in it holds a credential: every text is scrubbed of the
 * configured credential values before it is kept (SecretScrubber).
 */

/** The bytes (UTF-8) of a tool result a transcript keeps; the rest is cut, with a note. */
export const TOOL_RESULT_LIMIT_BYTES = 4096;

/** The shortest credential value that is scrubbed: a shorter one would match ordinary text. */
export const SHORTEST_SCRUBBED_SECRET = 6;

/** Tokens one model turn used, as its provider counted them. */
export interface TranscriptUsage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
}

/** A tool call as the model asked for it. */
export interface TranscriptToolCall {
  id: string;
  name: string;
  /** The arguments as the model sent them (JSON text, possibly malformed), scrubbed. */
  arguments: string;
}

/** One model turn. Times are ISO 8601 UTC. */
export interface ModelTurnEntry {
  type: 'model_turn';
  started_at: string;
  ended_at: string;
  /** `provider (model)` that answered the turn. */
  model: string;
  /** The turn's text, scrubbed; empty when it only called tools. */
  text: string;
  tool_calls: TranscriptToolCall[];
  /** Present when the provider reported the turn's usage. */
  usage?: TranscriptUsage;
}

/** One tool call and its result. Times are ISO 8601 UTC. */
export interface ToolCallEntry {
  type: 'tool_call';
  started_at: string;
  ended_at: string;
  call_id: string;
  name: string;
  /** As in the model turn that asked for it, scrubbed. */
  arguments: string;
  /** The result given back to the model, scrubbed, then cut to TOOL_RESULT_LIMIT_BYTES. */
  result: string;
  /** The call could not run or failed (bad arguments, unknown tool); the result says why. */
  is_error: boolean;
  /** The size of the whole result in bytes (UTF-8, scrubbed), before any cut. */
  result_bytes: number;
  /** What was cut (`12,300 of 16,396 bytes cut: the result is kept to its first 4 KB`); null when nothing was. */
  cut: string | null;
}

export type TranscriptEntry = ModelTurnEntry | ToolCallEntry;

/** A run's transcript: its entries in the order they happened. */
export type RunTranscript = TranscriptEntry[];

/** A credential the transcript must never hold: its name (`OPENAI_API_KEY`, `providers.openai.api_keys`) and value. */
export interface NamedSecret {
  name: string;
  value: string;
}

/**
 * Replaces every occurrence of the given credential values with `[redacted <name>]`. Values
 * shorter than SHORTEST_SCRUBBED_SECRET are left alone; the longest are replaced first, so that
 * a value holding another is replaced whole.
 */
export class SecretScrubber {
  private readonly secrets: NamedSecret[];

  constructor(secrets: readonly NamedSecret[]) {
    const byValue = new Map<string, string>();
    for (const secret of secrets) {
      if (secret.value.length >= SHORTEST_SCRUBBED_SECRET && !byValue.has(secret.value)) byValue.set(secret.value, secret.name);
    }
    this.secrets = [...byValue].map(([value, name]) => ({ name, value })).sort((a, b) => b.value.length - a.value.length);
  }

  scrub(text: string): string {
    let scrubbed = text;
    for (const { name, value } of this.secrets) {
      if (scrubbed.includes(value)) scrubbed = scrubbed.split(value).join(`[redacted ${name}]`);
    }
    return scrubbed;
  }
}

/**
 * `text` cut to its first `limit` bytes (UTF-8, never in the middle of a character), with how
 * big it was and a note of what was cut (null when nothing was).
 */
export function cutToolResult(
  text: string,
  limit: number = TOOL_RESULT_LIMIT_BYTES,
): { result: string; result_bytes: number; cut: string | null } {
  const bytes = utf8Length(text);
  if (bytes <= limit) return { result: text, result_bytes: bytes, cut: null };
  let kept = '';
  let keptBytes = 0;
  for (const character of text) {
    const size = utf8Length(character);
    if (keptBytes + size > limit) break;
    kept += character;
    keptBytes += size;
  }
  const count = (n: number) => n.toLocaleString('en-US');
  return {
    result: kept,
    result_bytes: bytes,
    cut: `${count(bytes - keptBytes)} of ${count(bytes)} bytes cut: the result is kept to its first ${limit / 1024} KB`,
  };
}

/**
 * A turn's usage as the model adapter reported it (`input_tokens`, `output_tokens`,
 * `cached_input_tokens`, or their camelCase spelling); undefined when it reported none.
 */
export function transcriptUsageOf(value: unknown): TranscriptUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const count = (...names: string[]) => {
    for (const name of names) if (typeof fields[name] === 'number' && Number.isFinite(fields[name])) return fields[name];
    return null;
  };
  const input = count('input_tokens', 'inputTokens');
  const output = count('output_tokens', 'outputTokens');
  if (input === null && output === null) return undefined;
  return {
    input_tokens: input ?? 0,
    output_tokens: output ?? 0,
    cached_input_tokens: count('cached_input_tokens', 'cachedInputTokens') ?? 0,
  };
}

/** The length of `text` in UTF-8 bytes. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (const character of text) {
    const point = character.codePointAt(0)!;
    bytes += point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
  }
  return bytes;
}
