import { escapeControlCharacters, printableLines } from '../controlCharacters.js';
import { formatFileStamp } from '../zonedTime.js';
import type { RunUsage } from '../runs/usage.js';

/**
 * Where a webhook run stands, as its record says:
 * - `running` — the agent was started;
 * - `answered` — the agent answered and the answer is being delivered;
 * - `delivered`, `delivery_failed`, `run_failed`, `not_run` — how the run ended (see
 *   WebhookRunStatus);
 * - `abandoned` — the gateway stopped before the run finished; it runs again after the restart.
 */
export const WEBHOOK_RUN_OUTCOMES = ['running', 'answered', 'delivered', 'delivery_failed', 'run_failed', 'not_run', 'abandoned'] as const;
export type WebhookRunOutcome = (typeof WEBHOOK_RUN_OUTCOMES)[number];

/** The outcomes after which the event is done: running it again would repeat it. */
export const FINAL_OUTCOMES: readonly WebhookRunOutcome[] = ['delivered', 'delivery_failed', 'run_failed', 'not_run'];

export function isFinalOutcome(outcome: WebhookRunOutcome): boolean {
  return FINAL_OUTCOMES.includes(outcome);
}

/** What is recorded of one webhook run (docs/webhooks.md, Run records). */
export interface WebhookRunRecord {
  /** The accepted event's own id (not the sender's delivery id). */
  eventId: string;
  route: string;
  event: string;
  deliveryId: string;
  /** ISO 8601 UTC: when the event was accepted; it names the file. */
  receivedAt: string;
  /** ISO 8601 UTC: when the first run of the event started. */
  startedAt: string;
  outcome: WebhookRunOutcome;
  /** Where the answer goes (`the log`, `octo/widgets#12`, `telegram:-100123`); null when not known. */
  deliveredTo: string | null;
  /** The rendered prompt; null when nothing ran. */
  prompt: string | null;
  /** The agent's answer, exactly as it gave it; null until it answered. */
  answer: string | null;
  /** Why the run did not run, failed, or was not delivered; null otherwise. */
  error: string | null;
  /** Set when no agent ran: `not run (deliver_only)`, the route delivering its rendered prompt as it is. */
  agent?: string | null;
  /** What the agent spent (docs/runs.md); null or absent when nothing was counted. */
  usage?: RunUsage | null;
  /** What it cost in US dollars; null or absent when unpriced. */
  costUsd?: number | null;
  /** For a run of coalesced events (docs/webhooks.md, Coalescing): the delivery ids of all of them, oldest first. */
  coalesced?: string[];
  /** Which attempt the run is when its route retried it (docs/runs.md, Retries); absent for a first attempt. */
  attempt?: number;
  /** The ledger id of a retried run's first attempt. */
  retryOf?: string;
}

/** `1200 input tokens (300 cached), 80 output tokens, 2 model turns, 1 tool calls`: the header line of a record's usage. */
export function usageLine(usage: RunUsage): string {
  return (
    `${usage.input_tokens} input tokens (${usage.cached_input_tokens} cached), ${usage.output_tokens} output tokens, ` +
    `${usage.model_turns} model turns, ${usage.tool_calls} tool calls`
  );
}

const USAGE_LINE = /^(\d+) input tokens \((\d+) cached\), (\d+) output tokens, (\d+) model turns, (\d+) tool calls$/;

/** A usage header line read back; null when it is not one. */
export function parseUsageLine(line: string | null): RunUsage | null {
  const match = line === null ? null : USAGE_LINE.exec(line);
  if (!match) return null;
  const [input, cached, output, turns, calls] = match.slice(1).map(Number) as [number, number, number, number, number];
  return { input_tokens: input, cached_input_tokens: cached, output_tokens: output, model_turns: turns, tool_calls: calls };
}

/** A cost header value read back (`0.0042 USD`); null when it is not one. */
function parseCost(value: string | null): number | null {
  const match = value === null ? null : /^(\d+(?:\.\d+)?) USD$/.exec(value);
  return match ? Number(match[1]) : null;
}

/** What a deliver_only run's record says of the agent. */
export const AGENT_NOT_RUN = 'not run (deliver_only)';

/**
 * `<YYYY-MM-DD_HH-MM-SS>_<event id>.md`, the time the event was received in `timeZone`: names
 * sort by time, and the event alone names its record.
 */
export function webhookRunFileName(record: Pick<WebhookRunRecord, 'receivedAt' | 'eventId'>, timeZone: string): string {
  return `${formatFileStamp(new Date(record.receivedAt), timeZone)}_${record.eventId}.md`;
}

const FILE_NAME = /^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_(.+)\.md$/;

/** The event id a record's file name carries, or null for a name that is not a record's. */
export function eventIdOfFileName(name: string): string | null {
  return FILE_NAME.exec(name)?.[1] ?? null;
}

const HEADER_FIELDS = [
  ['Route', 'route'],
  ['Event', 'event'],
  ['Delivery id', 'deliveryId'],
  ['Event id', 'eventId'],
  ['Received', 'receivedAt'],
  ['Started', 'startedAt'],
  ['Outcome', 'outcome'],
  ['Delivered to', 'deliveredTo'],
  ['Agent', 'agent'],
] as const;

const SECTIONS = [
  ['Prompt', 'prompt'],
  ['Error', 'error'],
  ['Answer', 'answer'],
] as const;

/** A header value on one line: an event kind taken from a payload may hold a newline. */
function escapeValue(value: string): string {
  return escapeControlCharacters(value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r'));
}

function unescapeValue(value: string): string {
  return value.replace(/\\(\\|n|r)/g, (_match, code: string) => (code === 'n' ? '\n' : code === 'r' ? '\r' : '\\'));
}

/** A fence longer than any run of backticks in `text`, so the text comes back exactly. */
function fenceFor(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * The record as Markdown: a header list, then the prompt, the error and the answer, each in a
 * fenced block so that any text, Markdown included, reads back unchanged — but for control
 * characters other than line ends and tabs, which are written escaped (`\u001b`).
 */
export function renderWebhookRunRecord(record: WebhookRunRecord): string {
  const lines = [`# Webhook run: ${escapeValue(record.route)}`, ''];
  for (const [label, key] of HEADER_FIELDS) {
    const value = record[key];
    if (value !== null && value !== undefined) lines.push(`- ${label}: ${escapeValue(value)}`);
  }
  if (record.usage) lines.push(`- Usage: ${usageLine(record.usage)}`);
  if (record.costUsd != null) lines.push(`- Cost: ${record.costUsd} USD`);
  if (record.coalesced) lines.push(`- Coalesced: ${escapeValue(JSON.stringify(record.coalesced))}`);
  for (const [title, key] of SECTIONS) {
    const quoted = record[key];
    if (quoted === null) continue;
    // Payloads, answers and errors come from outside: their control characters are written escaped.
    const text = printableLines(quoted);
    const fence = fenceFor(text);
    lines.push('', `## ${title}`, '', fence, text, fence);
  }
  lines.push('');
  return lines.join('\n');
}

/** Reads a record written by `renderWebhookRunRecord`; null when it is not one. Never throws. */
export function parseWebhookRunRecord(content: string): WebhookRunRecord | null {
  const header = new Map<string, string>();
  let at = 0;
  while (at < content.length) {
    const end = content.indexOf('\n', at);
    const line = content.slice(at, end < 0 ? undefined : end);
    if (line.startsWith('## ')) break;
    const field = /^- ([^:]+): (.*)$/.exec(line);
    if (field) header.set(field[1]!, unescapeValue(field[2]!));
    at = end < 0 ? content.length : end + 1;
  }
  const sections = sectionsFrom(content, at);
  if (sections === null) return null;
  const value = (label: string) => header.get(label) ?? null;
  const outcome = value('Outcome');
  const [route, eventId, startedAt] = [value('Route'), value('Event id'), value('Started')];
  if (route === null || eventId === null || startedAt === null || Number.isNaN(Date.parse(startedAt))) return null;
  if (!(WEBHOOK_RUN_OUTCOMES as readonly string[]).includes(outcome ?? '')) return null;
  return {
    eventId,
    route,
    event: value('Event') ?? 'unknown',
    deliveryId: value('Delivery id') ?? '',
    receivedAt: value('Received') ?? startedAt,
    startedAt,
    outcome: outcome as WebhookRunOutcome,
    deliveredTo: value('Delivered to'),
    prompt: sections.get('Prompt') ?? null,
    error: sections.get('Error') ?? null,
    answer: sections.get('Answer') ?? null,
    ...(value('Agent') !== null ? { agent: value('Agent') } : {}),
    ...(parseUsageLine(value('Usage')) !== null ? { usage: parseUsageLine(value('Usage')) } : {}),
    ...(parseCost(value('Cost')) !== null ? { costUsd: parseCost(value('Cost')) } : {}),
    ...coalescedOf(value('Coalesced')),
  };
}

/** `## Title`, a blank line and a fenced block, as many times as there are; null when malformed. */
function sectionsFrom(content: string, start: number): Map<string, string> | null {
  const sections = new Map<string, string>();
  const heading = /^## (.+)\n\n(`{3,})\n/gm;
  heading.lastIndex = start;
  let cursor = start;
  for (let match = heading.exec(content); match !== null; match = heading.exec(content)) {
    if (content.slice(cursor, match.index).trim() !== '') return null;
    const fence = match[2]!;
    const textStart = match.index + match[0].length;
    const close = content.indexOf(`\n${fence}`, textStart - 1);
    if (close < 0) return null;
    sections.set(match[1]!, content.slice(textStart, Math.max(textStart, close)));
    cursor = close + 1 + fence.length;
    heading.lastIndex = cursor;
  }
  return content.slice(cursor).trim() === '' ? sections : null;
}

/** The `Coalesced` header's delivery ids, as a record field; nothing when absent or unreadable. */
function coalescedOf(header: string | null): { coalesced?: string[] } {
  if (header === null) return {};
  try {
    const ids: unknown = JSON.parse(header);
    return Array.isArray(ids) && ids.every((id) => typeof id === 'string') ? { coalesced: ids as string[] } : {};
  } catch {
    return {};
  }
}
