import type { RunContext } from '../RunContext.js';
import type { TokenCounts } from '../runs/usage.js';

/*
 * The conversation of one agent session in no provider's format. The session keeps it in this
 * shape and each wire format translates it on every turn, so that a fallback provider of the
 * other format can take over in the middle of a run.
 */

/** A message of a run's conversation. */
export type TranscriptMessage =
  | { role: 'user'; text: string; images?: readonly TranscriptImage[] }
  | { role: 'assistant'; text: string; toolCalls: readonly RequestedToolCall[] }
  | { role: 'tool'; results: readonly ToolCallResult[] };

/** The image types every wire format takes as image input. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/**
 * An image a user message hands to the model, beside its text: each wire format sends it in its
 * own form (an OpenAI `image_url` part with a data URL, an Anthropic `image` block).
 */
export interface TranscriptImage {
  mediaType: ImageMediaType;
  /** The image's bytes in base64. */
  base64: string;
}

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

/** One model turn: its text and the tool calls it asks for (none = a final answer). */
export interface ModelTurn {
  text: string;
  toolCalls: RequestedToolCall[];
  /** The turn's tokens as the provider streamed them; null or absent when it sent none. */
  usage?: TokenCounts | null;
}

/**
 * The system text and first messages of a session: the memory documents as system
 * text, then each skill as a user message, then each further document (a job folder's AGENTS.md,
 * answers carried forward) as a user message under its name, then the earlier turns of a chat (oldest first; cron
 * and webhook runs have none), then the task.
 */
export function openingOf(
  context: RunContext,
  conversation: ReadonlyArray<{ role: 'user' | 'assistant'; content: string }> = [],
): { system: string | null; messages: TranscriptMessage[] } {
  return {
    system: systemText(context.system),
    messages: [
      ...context.skills.map((skill): TranscriptMessage => ({
        role: 'user',
        text: `# Skill: ${skill.name}\n\n${skill.content.trimEnd()}`,
      })),
      ...(context.documents ?? []).map((document): TranscriptMessage => ({
        role: 'user',
        text: `# ${document.name}\n\n${document.content.trimEnd()}`,
      })),
      ...conversation.map((turn): TranscriptMessage =>
        turn.role === 'user' ? { role: 'user', text: turn.content } : { role: 'assistant', text: turn.content, toolCalls: [] },
      ),
      { role: 'user', text: context.task },
    ],
  };
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

/** The result the model gets for a call that could not run: `{"error": message}`. */
export function toolErrorResult(call: RequestedToolCall, message: string): ToolCallResult {
  return { callId: call.id, name: call.name, content: JSON.stringify({ error: message }), isError: true };
}
