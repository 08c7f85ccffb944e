/** A named text injected into a run: a memory file or a skill. */
export interface ContextDocument {
  name: string;
  content: string;
}

/**
 * What a fresh agent session, without history, is given: memory as system context,
 * each skill as its own user message in list order, then the documents (each its own user
 * message: a job folder's AGENTS.md, answers carried forward), then one task message.
 */
export interface RunContext {
  system: ContextDocument[];
  skills: ContextDocument[];
  /** User messages between the skills and the task, each under its name; absent or empty for none. */
  documents?: ContextDocument[];
  task: string;
}

/** How much of each answer carried forward (`--context-from`, `--continue`) a run is given. */
export const CARRIED_ANSWER_BYTES = 8 * 1024;

/** The last `ok` answer of a job, carried forward into another run (or the next run of the same job). */
export interface CarriedAnswer {
  jobId: string;
  /** The job's name at the time of that run; null when not known (no run of it is kept). */
  jobName: string | null;
  /** True for the job's own last answer (`--continue`). */
  own: boolean;
  /** The answer and when its run ended (ISO 8601 UTC); null when the job has no `ok` answer kept. */
  last: { answer: string; at: string } | null;
  /** True when the job named no longer exists. */
  gone?: boolean;
}

/** The job folder's AGENTS.md as a document of the run's context. */
export function folderInstructionsDocument(folder: string, content: string): ContextDocument {
  return { name: `AGENTS.md of the working folder ${folder}`, content };
}

/**
 * An answer carried forward as a document: what it is, from which job and when, and the
 * answer cut to its first 8 KB (saying so when it was cut).
 */
export function carriedAnswerDocument(carried: CarriedAnswer): ContextDocument {
  const job = carried.jobName === null ? `job ${carried.jobId}` : `job '${carried.jobName}' (${carried.jobId})`;
  const name = carried.own ? 'Earlier answer of this job' : `Earlier answer of ${job}`;
  if (carried.gone) return { name, content: `The job ${carried.jobId} no longer exists, so there is no answer of it to carry forward.` };
  if (carried.last === null) {
    return { name, content: `There is no ok answer of ${carried.own ? 'this job' : job} to carry forward yet.` };
  }
  const whose = carried.own ? `this job's own last answer` : `the last answer of ${job}`;
  const { text, leftOut } = firstBytes(carried.last.answer, CARRIED_ANSWER_BYTES);
  const cut = leftOut > 0 ? ` It was cut to its first 8 KB: ${leftOut} more bytes were left out.` : '';
  return {
    name,
    content: `This is ${whose}, given at ${carried.last.at} by a run that ended ok, carried forward as context; this run is still a fresh session.${cut}\n\n${text.trimEnd()}`,
  };
}

/** The first `limit` bytes of `text` in UTF-8, never splitting a character, and how many bytes were left out. */
export function firstBytes(text: string, limit: number): { text: string; leftOut: number } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= limit) return { text, leftOut: 0 };
  let end = limit;
  // A continuation byte (10xxxxxx) belongs to the character that started before it.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return { text: new TextDecoder().decode(bytes.subarray(0, end)), leftOut: bytes.length - end };
}

export const CRON_PREAMBLE =
  'This is an unattended scheduled run: nobody is watching and no questions can be asked, so decide ' +
  'for yourself. If there is nothing worth reporting, answer exactly [SILENT].';

export interface RunContextInput {
  memories: readonly ContextDocument[];
  skills: ReadonlyArray<{ name: string; content: string | null }>;
  prompt: string;
  scriptBlock?: string | null;
  /** The job's working folder and its AGENTS.md, when it has one there. */
  folderInstructions?: { folder: string; content: string } | null;
  /** Answers carried forward, in order: the jobs named by `context_from`, then its own (`continue`). */
  carried?: readonly CarriedAnswer[];
  /** The run of another job that started this one (a chain, domain/jobChains.ts), told of last; null or absent for none. */
  followed?: ContextDocument | null;
}

/**
 * Assembles a run's context; a missing skill becomes a note so the agent knows it is absent.
 * After the skills come the working folder's AGENTS.md, then the answers carried forward.
 */
export function buildRunContext(input: RunContextInput): RunContext {
  const skills = input.skills.map(({ name, content }) => ({
    name,
    content: content ?? `The skill "${name}" was requested for this run but was not found; carry on without it.`,
  }));
  const task = [CRON_PREAMBLE, input.scriptBlock ?? null, input.prompt]
    .filter((part): part is string => part !== null && part.trim() !== '')
    .join('\n\n');
  const documents = [
    ...(input.folderInstructions ? [folderInstructionsDocument(input.folderInstructions.folder, input.folderInstructions.content)] : []),
    ...(input.carried ?? []).map(carriedAnswerDocument),
    ...(input.followed ? [input.followed] : []),
  ];
  return { system: [...input.memories], skills, ...(documents.length > 0 ? { documents } : {}), task };
}

/** An interactive question: memory as system context, no skills unless asked for, the question as the task. */
export function buildChatContext(input: { memories: readonly ContextDocument[]; question: string }): RunContext {
  return { system: [...input.memories], skills: [], task: input.question };
}

/** The block a pre-run script's stdout adds to the task. */
export function scriptOutputBlock(stdout: string): string {
  return `## Script Output\n\n${stdout.trimEnd()}`;
}

export function scriptErrorBlock(problem: string, stderr: string): string {
  const detail = stderr.trim() ? `\n\n${stderr.trimEnd()}` : '';
  return `## Script Error\n\n${problem}${detail}`;
}

/**
 * A failed script's error when no agent runs (a job's `no_agent`): what the Script Error block
 * would tell the agent, as the run's error.
 */
export function scriptErrorText(problem: string, stderr: string): string {
  const detail = stderr.trim() ? `\n\n${stderr.trimEnd()}` : '';
  return `Script Error: ${problem}${detail}`;
}

/** The script's "do not wake the agent" gate: its last non-empty stdout line. */
export function scriptSaysSleep(stdout: string): boolean {
  const last = stdout
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .at(-1);
  if (!last) return false;
  try {
    const parsed: unknown = JSON.parse(last);
    return typeof parsed === 'object' && parsed !== null && (parsed as { wakeAgent?: unknown }).wakeAgent === false;
  } catch {
    return false;
  }
}
