/**
 * The job tool's arguments for a job's own toolsets, working folder and answers carried forward
 * (`agent cron create|edit --toolset`, `--workdir`, `--context-from`, `--continue`; docs/tools.md).
 */
import type { EditJobInput } from '../../application/cron/EditJob.js';
import type { Job } from '../../domain/Job.js';
import type { ToolArguments } from './ToolArguments.js';

export const PER_JOB_ARGUMENTS = ['toolsets', 'workdir', 'context_from', 'continue', 'after'] as const;

/** An empty string clears a per-job setting just as null does. */
function clearable(value: string | null | undefined): string | null | undefined {
  return value === undefined ? undefined : value === null || value.trim() === '' ? null : value.trim();
}

/** `toolsets`: a list, or null (or []) for the preset again. */
function toolsets(input: ToolArguments): string[] | null | undefined {
  const list = input.stringList('toolsets');
  if (list !== undefined) return list;
  return input.has('toolsets') ? null : undefined;
}

/** The per-job toolsets, working folder and answers carried forward, as create and update take them. */
export function perJobInput(input: ToolArguments): Pick<EditJobInput, 'toolsets' | 'workdir' | 'context_from' | 'continue' | 'after'> {
  const given: Pick<EditJobInput, 'toolsets' | 'workdir' | 'context_from' | 'continue' | 'after'> = {};
  const sets = toolsets(input);
  if (sets !== undefined) given.toolsets = sets;
  const workdir = clearable(input.nullableString('workdir'));
  if (workdir !== undefined) given.workdir = workdir;
  const contextFrom = input.stringList('context_from');
  if (contextFrom !== undefined) given.context_from = contextFrom;
  const carryOn = input.boolean('continue');
  if (carryOn !== undefined) given.continue = carryOn;
  const after = input.stringList('after');
  if (after !== undefined) given.after = after;
  return given;
}

/** How a job shows them to the model. */
export function perJobView(job: Job): Record<string, unknown> {
  return {
    toolsets: job.toolsets ?? null,
    workdir: job.workdir ?? null,
    context_from: job.context_from ?? [],
    continue: job.continue ?? false,
    after: (job.after ?? []).map((link) => `${link.job}:${link.on}`),
  };
}

const nullableString = (description: string) => ({ type: ['string', 'null'], description });

/** Their JSON Schema properties. */
export const PER_JOB_PROPERTIES = {
  toolsets: {
    type: ['array', 'null'],
    items: { type: 'string' },
    description:
      'Toolsets its runs get instead of the agent-cron preset (terminal, web, web_search, web_extract, clarify, vision, …); cronjob is never given to a run. null or [] is the preset again.',
  },
  workdir: nullableString(
    'Folder its terminal commands and pre-run script run in (absolute, or relative to the workspace; it must exist); an AGENTS.md there is given to the agent. null is the workspace again.',
  ),
  context_from: {
    type: 'array',
    items: { type: 'string' },
    description:
      'Jobs (ids or names) whose last ok answer each run is given as context, with its time, cut to 8 KB. On update it replaces the list; [] removes all.',
  },
  continue: {
    type: 'boolean',
    description: "true: each run is also given this job's own last ok answer (cut to 8 KB); runs are fresh sessions otherwise.",
  },
  after: {
    type: 'array',
    items: { type: 'string' },
    description:
      'Jobs whose runs start this one when they end: "<job id or name>[:ok|:failed|:any]" (ok by default); each run is given that run\'s id, status and answer. With after, create needs no schedule: the job then runs only after them. On update it replaces the list; [] removes all.',
  },
};
