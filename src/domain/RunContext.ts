/** A named text injected into a run: a memory file or a skill. */
export interface ContextDocument {
  name: string;
  content: string;
}

/**
 * What a fresh agent session, without history, is given: memory as system context,
 * each skill as its own user message in list order, then one task message.
 */
export interface RunContext {
  system: ContextDocument[];
  skills: ContextDocument[];
  task: string;
}

export const CRON_PREAMBLE =
  'This is an unattended scheduled run: nobody is watching and no questions can be asked, so decide ' +
  'for yourself. If there is nothing worth reporting, answer exactly [SILENT].';

export interface RunContextInput {
  memories: readonly ContextDocument[];
  skills: ReadonlyArray<{ name: string; content: string | null }>;
  prompt: string;
  scriptBlock?: string | null;
}

/** Assembles a run's context; a missing skill becomes a note so the agent knows it is absent. */
export function buildRunContext(input: RunContextInput): RunContext {
  const skills = input.skills.map(({ name, content }) => ({
    name,
    content: content ?? `The skill "${name}" was requested for this run but was not found; carry on without it.`,
  }));
  const task = [CRON_PREAMBLE, input.scriptBlock ?? null, input.prompt]
    .filter((part): part is string => part !== null && part.trim() !== '')
    .join('\n\n');
  return { system: [...input.memories], skills, task };
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
