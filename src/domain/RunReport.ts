import { printableLines } from './controlCharacters.js';
import type { Job } from './Job.js';
import { assertTimeZone, formatFileStamp, formatWallClock, instantOfWallClock } from './zonedTime.js';

export interface RunReportInput {
  job: Pick<Job, 'id' | 'name' | 'prompt' | 'schedule'>;
  startedAt: Date;
  timeZone: string;
  status: string;
  response?: string | null;
  error?: string | null;
  answeredBy?: string | null;
  /**
   * Bot-chat receipts the delivery queued (admission, not proof of delivery). With the status
   * `delivery_queued` the report records the delivery outcome `queued`; with `delivery_failed`
   * (a real failure on another target wins) the receipts are still recorded.
   */
  queuedReceipts?: readonly string[];
  /** What failed in the delivery, one line per target; recorded with `delivery_failed`, joined by `; `. */
  deliveryError?: string | null;
  /** Set when no agent runs: AGENT_NOT_RUN_NO_AGENT for a job that runs only its script. */
  agent?: string | null;
}

/** What the report of a job that runs only its script (`no_agent`) says of the agent. */
export const AGENT_NOT_RUN_NO_AGENT = 'not run (no_agent)';

/** File name of a run's output, in the job's time zone so it sorts by run time. */
export function runReportFileName(startedAt: Date, timeZone: string): string {
  return `${formatFileStamp(startedAt, timeZone)}.md`;
}

/** The Markdown report written for every run (docs/cron.md). */
export function renderRunReport(input: RunReportInput): string {
  const lines = [
    `# Cron job: ${input.job.name}`,
    '',
    `- Job id: ${input.job.id}`,
    `- Run at: ${formatWallClock(input.startedAt, input.timeZone)} (${input.timeZone})`,
    `- Schedule: ${input.job.schedule.display}`,
    `- Status: ${input.status}`,
  ];
  if (input.agent) lines.push(`- Agent: ${input.agent}`);
  if (input.answeredBy) lines.push(`- Answered by: ${input.answeredBy}`);
  const receipts = input.queuedReceipts ?? [];
  if (input.deliveryError) {
    lines.push('- Delivery outcome: failed', `- Delivery error: ${input.deliveryError.split('\n').join('; ')}`);
  } else if (receipts.length > 0) {
    lines.push('- Delivery outcome: queued');
  }
  if (receipts.length > 0) lines.push(`- Queued receipts: ${receipts.join(', ')}`);
  lines.push('', '## Prompt', '', input.job.prompt, '');
  if (input.error) lines.push('## Error', '', input.error, '');
  if (input.response !== undefined && input.response !== null) lines.push('## Response', '', input.response, '');
  // Answers, errors and prompts come from models, platforms and scripts: no control character
  // of theirs reaches a terminal that shows the report.
  return printableLines(lines.join('\n'));
}

/** What `agent cron runs` and `agent cron show` read back from one run report. */
export interface RunReportSummary {
  /** When the run started; null when neither the file name nor the report says. */
  startedAt: Date | null;
  /** The run's status as written (`ok`, `error` …); null for a report without a status line. */
  status: string | null;
  /** The agent's answer, or null when the report holds none. */
  response: string | null;
  /** The run's error, or null when the report holds none. */
  error: string | null;
}

const FILE_STAMP = /^(\d{4})-(\d{2})-(\d{2})_(\d{2})-(\d{2})-(\d{2})/;
const RUN_AT = /^- Run at: (\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}) \(([^)]+)\)$/m;
const STATUS = /^- Status: (\S+)\s*$/m;
const PROMPT_HEADING = '## Prompt\n\n';
const ERROR_HEADING = '## Error\n\n';
const RESPONSE_HEADING = '## Response\n\n';

/**
 * Reads a report written by `renderRunReport`, by this version or an older one: the status
 * line, the run time (the file name's wall clock, read in the zone the report names, else in
 * `fallbackTimeZone`) and the error and response sections. `prompt`, when it is the prompt the
 * run had, lets the sections be found even when the prompt itself holds a `## Response` line.
 * Never throws: what cannot be read is null.
 */
export function parseRunReport(fileName: string, content: string, fallbackTimeZone: string, prompt?: string): RunReportSummary {
  const text = content.replace(/\r\n/g, '\n');
  const status = STATUS.exec(headerOf(text))?.[1] ?? null;
  const { error, response } = sectionsOf(text, prompt);
  return { startedAt: startedAtOf(fileName, text, fallbackTimeZone), status, error, response };
}

/** The first line of a run's error, else of its answer, that has any text; null when neither has. */
export function runReportHeadline(summary: Pick<RunReportSummary, 'error' | 'response'>): string | null {
  for (const text of [summary.error, summary.response]) {
    const line = text?.split('\n').find((each) => each.trim() !== '');
    if (line !== undefined) return line.trim();
  }
  return null;
}

/** The list under the title: everything before the first section. */
function headerOf(text: string): string {
  const end = text.indexOf(`\n${PROMPT_HEADING}`);
  return end < 0 ? text : text.slice(0, end);
}

function startedAtOf(fileName: string, text: string, fallbackTimeZone: string): Date | null {
  const runAt = RUN_AT.exec(headerOf(text));
  const timeZone = knownZone(runAt?.[6]) ?? fallbackTimeZone;
  // The file name has the seconds; the "Run at" line only minutes, for a file renamed by hand.
  const fields = FILE_STAMP.exec(fileName)?.slice(1, 7) ?? runAt?.slice(1, 6).concat('0');
  if (!fields) return null;
  const [year, month, day, hour, minute, second] = fields.map(Number) as [number, number, number, number, number, number];
  const instant = instantOfWallClock({ year, month, day, hour, minute, second }, timeZone);
  return Number.isNaN(instant.getTime()) ? null : instant;
}

function knownZone(zone: string | undefined): string | null {
  if (zone === undefined) return null;
  try {
    return assertTimeZone(zone);
  } catch {
    return null;
  }
}

/**
 * The error and response sections. The prompt comes first and is free text, so the sections
 * start right after the prompt when it is known, else at the first heading after the prompt's.
 */
function sectionsOf(text: string, prompt: string | undefined): { error: string | null; response: string | null } {
  const promptAt = text.indexOf(PROMPT_HEADING);
  if (promptAt < 0) return { error: null, response: null };
  const promptStart = promptAt + PROMPT_HEADING.length;
  let rest: string;
  if (prompt !== undefined && text.startsWith(`${prompt}\n\n`, promptStart)) {
    rest = text.slice(promptStart + prompt.length + 2);
  } else {
    const headings = [`\n\n${ERROR_HEADING}`, `\n\n${RESPONSE_HEADING}`]
      .map((heading) => text.indexOf(heading, promptStart - 1))
      .filter((at) => at >= 0);
    rest = headings.length > 0 ? text.slice(Math.min(...headings) + 2) : '';
  }
  let error: string | null = null;
  if (rest.startsWith(ERROR_HEADING)) {
    const end = rest.indexOf(`\n\n${RESPONSE_HEADING}`, ERROR_HEADING.length - 1);
    error = withoutFinalNewline(rest.slice(ERROR_HEADING.length, end < 0 ? undefined : end + 1));
    rest = end < 0 ? '' : rest.slice(end + 2);
  }
  const response = rest.startsWith(RESPONSE_HEADING) ? withoutFinalNewline(rest.slice(RESPONSE_HEADING.length)) : null;
  return { error, response };
}

function withoutFinalNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}
