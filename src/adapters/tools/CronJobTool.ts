import type { JobOrigin } from '../../domain/Job.js';
import { inject, injectable } from 'inversify';
import { ToolInputError, type Tool, type ToolCallContext, type ToolSpec } from '../../application/agent/ports/Tool.js';
import type { CreateJobInput } from '../../application/cron/CreateJob.js';
import type { EditJobInput } from '../../application/cron/EditJob.js';
import type { JobRunReport } from '../../application/cron/JobRunReports.js';
import type { RedeliverJobRunOutput } from '../../application/cron/RedeliverJobRun.js';
import type { JobChange, JobControl } from '../../application/ports/JobControl.js';
import type { CronSettings } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { AppError, errorText } from '../../domain/errors.js';
import { CATCH_UP_POLICIES, JOB_BUDGET_KEYS, type CatchUp, type Job } from '../../domain/Job.js';
import { BUDGET_PARAMETERS, budgetInput } from './cronJobBudget.js';
import { SCHEDULE_FORMS, scheduleHint, spellingsOf } from '../../domain/Schedule.js';
import { ToolArguments } from './ToolArguments.js';
import { PER_JOB_ARGUMENTS, PER_JOB_PROPERTIES, perJobInput, perJobView } from './cronJobPerJob.js';

/** The job tool's name. */
export const CRON_JOB_TOOL_NAME = 'cronjob';

const ACTIONS = ['create', 'list', 'update', 'pause', 'resume', 'run', 'redeliver', 'remove'] as const;
type Action = (typeof ACTIONS)[number];

const ARGUMENTS = [
  'action',
  'job',
  'schedule',
  'prompt',
  'name',
  'deliver',
  'skills',
  'script',
  'repeat',
  'model',
  'provider',
  'reason',
  'timezone',
  'catch_up',
  'no_agent',
  ...PER_JOB_ARGUMENTS,
  'run',
  ...JOB_BUDGET_KEYS,
] as const;

type Outcome = Record<string, unknown>;

/**
 * `cronjob`, the model-facing job tool: one tool whose `action` is create, list, update,
 * pause, resume, run, redeliver or remove, through the JobControl port (the same use cases as
 * `agent cron`). Results are JSON text: `{"success": true, …}`, or `{"success": false, "error"}`
 * with the use case's one sentence when it refuses. A create or update that went through but
 * names a platform, a channel or a skill this host lacks adds `"warnings"`, one sentence each. Arguments of the wrong shape throw
 * ToolInputError before any use case runs.
 *
 * Cron-run sessions never get this tool. A job it creates records the session's chat as its
 * origin (a conversation on a platform, a bot-chat profile), where `deliver: origin` delivers;
 * made where there is no chat, it has none and `origin` is the output file.
 */
@injectable()
export class CronJobTool implements Tool {
  readonly spec: ToolSpec;

  constructor(
    @inject(TOKENS.JobControl) private readonly jobs: JobControl,
    @inject(TOKENS.CronSettings) settings: CronSettings,
  ) {
    this.spec = cronJobSpec(settings.timeZone);
  }

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    const input = new ToolArguments('cronjob', withAliases(args));
    input.rejectUnknown(ARGUMENTS);
    const operation = this.operationFor(readAction(input), input, context.origin ?? null);
    try {
      return JSON.stringify({ success: true, ...(await operation()) });
    } catch (error) {
      return JSON.stringify({ success: false, error: sentenceOf(error) });
    }
  }

  /** Reads every argument the action needs first, so that a wrong shape throws before anything runs. */
  private operationFor(action: Action, input: ToolArguments, origin: JobOrigin | null): () => Promise<Outcome> {
    switch (action) {
      case 'create': {
        const job = { ...createInput(input), origin };
        return async () => changeView(await this.jobs.create(job));
      }
      case 'list':
        return async () => {
          const { jobs, unreadable } = await this.jobs.list();
          return {
            jobs: jobs.map(listView),
            ...(unreadable.length > 0
              ? { unreadable_records: unreadable.map(({ index, id, reason }) => ({ record: index + 1, id, reason })) }
              : {}),
          };
        };
      case 'update': {
        const changes = editInput(input);
        return async () => changeView(await this.jobs.update(changes));
      }
      case 'pause': {
        const job = jobReference(input, action);
        const reason = input.string('reason');
        return async () => ({ job: jobView(await this.jobs.pause(job, reason)) });
      }
      case 'resume': {
        const job = jobReference(input, action);
        return async () => ({ job: jobView(await this.jobs.resume(job)) });
      }
      case 'run': {
        const job = jobReference(input, action);
        return async () => {
          const { job: ran, report } = await this.jobs.run(job);
          return { job: jobView(ran), run: runView(report) };
        };
      }
      case 'redeliver': {
        const job = jobReference(input, action);
        const run = input.string('run') ?? null;
        return async () => {
          const redelivered = await this.jobs.redeliver(job, run);
          return { job: jobView(redelivered.job), run: redeliveryView(redelivered) };
        };
      }
      case 'remove': {
        const job = jobReference(input, action);
        return async () => ({ job: jobView(await this.jobs.remove(job)) });
      }
    }
  }
}

/**
 * Names models reach for that mean the same as ours: the job as `job_id` or `id` (its record
 * field), one skill as the legacy `skill`. Taken only when the proper name is absent.
 */
function withAliases(args: Record<string, unknown>): Record<string, unknown> {
  const { job_id: jobId, id, skill, ...rest } = args;
  const job = rest.job ?? jobId ?? id;
  const skills = rest.skills ?? (typeof skill === 'string' ? [skill] : skill);
  return { ...rest, ...(job === undefined ? {} : { job }), ...(skills === undefined ? {} : { skills }) };
}

function readAction(input: ToolArguments): Action {
  const action = input.string('action');
  if (action === undefined) {
    throw new ToolInputError(`cronjob needs "action": one of ${ACTIONS.join(', ')}.`);
  }
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new ToolInputError(`cronjob has no action "${action}"; use one of ${ACTIONS.join(', ')}.`);
  }
  return action as Action;
}

function jobReference(input: ToolArguments, action: Action): string {
  return input.requiredString('job', `the id or name of the job to ${action} (see action "list")`);
}

/** An empty string clears a per-job override just as null does. */
function clearable(value: string | null | undefined): string | null | undefined {
  return value === undefined ? undefined : value === null || value.trim() === '' ? null : value.trim();
}

/** `catch_up`: once or skip; null (or "") follows the configured policy again. */
function catchUp(input: ToolArguments): CatchUp | null | undefined {
  const value = clearable(input.nullableString('catch_up'));
  if (value === undefined || value === null) return value;
  if (!(CATCH_UP_POLICIES as readonly string[]).includes(value)) {
    throw new ToolInputError(`cronjob: "catch_up" must be one of ${CATCH_UP_POLICIES.join(', ')} or null, not ${JSON.stringify(value)}.`);
  }
  return value as CatchUp;
}

function createInput(input: ToolArguments): CreateJobInput {
  const noAgent = input.boolean('no_agent') ?? false;
  return {
    // A job that runs after others needs no schedule of its own.
    schedule: input.stringList('after')?.length
      ? (input.string('schedule') ?? '')
      : input.requiredString('schedule', `when the job runs, e.g. ${scheduleHint()}`),
    // A job without the agent needs no prompt: nobody reads it.
    prompt: noAgent ? (input.string('prompt') ?? '') : input.requiredString('prompt', 'the self-contained task the agent does on each run'),
    name: input.string('name') ?? null,
    deliver: input.string('deliver') ?? null,
    skills: input.stringList('skills') ?? [],
    script: clearable(input.nullableString('script')) ?? null,
    repeat: input.nullableInteger('repeat') ?? null,
    model: clearable(input.nullableString('model')) ?? null,
    provider: clearable(input.nullableString('provider')) ?? null,
    timezone: clearable(input.nullableString('timezone')) ?? null,
    catch_up: catchUp(input) ?? null,
    no_agent: noAgent,
    ...perJobInput(input),
    budget: budgetInput(input) ?? null,
  };
}

function editInput(input: ToolArguments): EditJobInput {
  const changes: EditJobInput = { job: jobReference(input, 'update') };
  const schedule = input.string('schedule');
  if (schedule !== undefined) changes.schedule = schedule;
  const prompt = input.string('prompt');
  if (prompt !== undefined) changes.prompt = prompt;
  const name = input.string('name');
  if (name !== undefined) changes.name = name;
  const deliver = input.string('deliver');
  if (deliver !== undefined) changes.deliver = deliver;
  const skills = input.stringList('skills');
  if (skills !== undefined) changes.skills = skills;
  const script = clearable(input.nullableString('script'));
  if (script !== undefined) changes.script = script;
  const repeat = input.nullableInteger('repeat');
  if (repeat !== undefined) changes.repeat = repeat;
  const model = clearable(input.nullableString('model'));
  if (model !== undefined) changes.model = model;
  const provider = clearable(input.nullableString('provider'));
  if (provider !== undefined) changes.provider = provider;
  const timezone = clearable(input.nullableString('timezone'));
  if (timezone !== undefined) changes.timezone = timezone;
  const policy = catchUp(input);
  if (policy !== undefined) changes.catch_up = policy;
  const noAgent = input.boolean('no_agent');
  if (noAgent !== undefined) changes.no_agent = noAgent;
  const budget = budgetInput(input);
  if (budget !== undefined) changes.budget = budget;
  return { ...changes, ...perJobInput(input) };
}

/** A job as the model sees it after create, update, pause, resume, run, redeliver or remove. */
function jobView(job: Job): Outcome {
  return {
    id: job.id,
    name: job.name,
    schedule: job.schedule.display,
    timezone: job.timezone,
    prompt: job.prompt,
    deliver: job.deliver,
    skills: job.skills,
    script: job.script,
    repeat: job.repeat,
    model: job.model,
    provider: job.provider,
    state: job.state,
    enabled: job.enabled,
    paused_reason: job.paused_reason,
    catch_up: job.catch_up,
    no_agent: job.no_agent,
    ...perJobView(job),
    budget: job.budget ?? null,
    next_run_at: job.next_run_at,
    last_run_at: job.last_run_at,
    last_status: job.last_status,
    last_error: job.last_error,
    last_delivery_error: job.last_delivery_error,
    last_delivery_queued: job.last_delivery_queued,
    created_at: job.created_at,
  };
}

/** A created or updated job, with `warnings` when something would keep it from doing what it says. */
function changeView({ job, warnings }: JobChange): Outcome {
  return { job: jobView(job), ...(warnings.length > 0 ? { warnings } : {}) };
}

/** One line of `list`: enough to pick a job and see how it is doing. */
function listView(job: Job): Outcome {
  return {
    id: job.id,
    name: job.name,
    schedule: job.schedule.display,
    // Only a job with its own zone names one: the others are in the configured zone.
    ...(job.timezone ? { timezone: job.timezone } : {}),
    state: job.state,
    next_run_at: job.next_run_at,
    last_status: job.last_status,
    deliver: job.deliver,
  };
}

function runView(report: JobRunReport): Outcome {
  const { outcome } = report;
  switch (outcome.status) {
    case 'ok':
      return { last_status: 'ok', answer: report.response };
    case 'error':
    case 'blocked_config':
      return { last_status: outcome.status, error: outcome.error };
    case 'delivery_failed':
      return { last_status: 'delivery_failed', answer: report.response, delivery_error: outcome.deliveryError };
    case 'delivery_queued':
      return { last_status: 'delivery_queued', answer: report.response, receipts: outcome.receipts };
  }
}

/** A redelivery as the model sees it: the run, how its answer stands now, and how it went to each target this time. */
function redeliveryView({ run, sent, outcome, lastRun }: RedeliverJobRunOutput): Outcome {
  return {
    id: run.id,
    status: outcome.status,
    sent,
    ...(outcome.status === 'delivery_failed' ? { delivery_error: outcome.deliveryError } : {}),
    redelivered_at: run.redelivered_at ?? null,
    last_run: lastRun,
  };
}

function sentenceOf(error: unknown): string {
  if (error instanceof AppError) return error.message;
  const detail = errorText(error);
  return `Something unexpected went wrong: ${detail}`;
}

/** Every schedule form with all its spellings and what it does: `"every 30m" (interval), "0 9 * * 1-5" / "@hourly" / … (cron: …), …`. */
const SCHEDULE_HELP = SCHEDULE_FORMS.map(
  (form) =>
    `${spellingsOf(form)
      .map((spelling) => `"${spelling}"`)
      .join(' / ')} (${form.help})`,
).join(', ');

function cronJobSpec(timeZone: string): ToolSpec {
  const nullableString = (description: string) => ({ type: ['string', 'null'], description });
  return {
    name: CRON_JOB_TOOL_NAME,
    description:
      'Create and manage scheduled jobs. Each run of a job is a fresh agent session with no memory of this ' +
      'conversation, so its prompt must be self-contained. Actions: create (schedule and prompt required), ' +
      'list, update, pause, resume, run (runs it now and returns the outcome), remove; all but create and ' +
      'list take "job". Returns JSON: {"success": true, ...} or {"success": false, "error": "..."}; create and ' +
      'update add "warnings" (the job is saved) when a delivery platform is not configured, a named channel is ' +
      'unknown or a skill is not found: tell the user.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: [...ACTIONS], description: 'What to do.' },
        job: { type: 'string', description: 'Id or name of the job (all actions but create and list).' },
        schedule: {
          type: 'string',
          description:
            `When it runs: ${SCHEDULE_HELP}. ` +
            `Cron expressions and times without an offset are read in ${timeZone}, or in the job's "timezone" when it has one.`,
        },
        prompt: { type: 'string', description: 'The self-contained task the agent does on each run.' },
        name: { type: 'string', description: 'Display name; default: the start of the prompt.' },
        deliver: {
          type: 'string',
          description: 'Where answers go: "local" (a file), "origin" (default), "telegram:<chat_id>", …; comma-separated for several.',
        },
        skills: {
          type: 'array',
          items: { type: 'string' },
          description: 'Skills loaded before the prompt, in order. On update it replaces the list; [] removes all.',
        },
        script: nullableString(
          'Pre-run script, relative to the scripts directory; its output is given to the agent. On update null removes it.',
        ),
        repeat: {
          type: ['integer', 'null'],
          description:
            'Runs in all before the job completes. Default: 1 for one-shots, no limit for recurring jobs; on update null means no limit.',
        },
        model: nullableString('Model for this job; null uses the configured default.'),
        provider: nullableString('Provider for this job; null uses the configured default.'),
        reason: { type: 'string', description: 'With pause: why, in one line; shown with the job until it is resumed.' },
        timezone: nullableString(
          `IANA time zone (e.g. "America/New_York") the job's cron expression and times without an offset are read in, and its times shown in; null uses the configured ${timeZone}.`,
        ),
        catch_up: {
          type: ['string', 'null'],
          enum: [...CATCH_UP_POLICIES, null],
          description:
            'What a recurring job does with a slot found overdue (the machine slept, nothing ran): "once" runs it once, "skip" skips it and waits for the next slot. null uses the configured default.',
        },
        no_agent: {
          type: 'boolean',
          description:
            'true: each run runs only the pre-run script (required) and delivers its output as the answer, without the agent (empty output or [SILENT] delivers nothing); the prompt may then be left out. On update false runs the agent again.',
        },
        ...PER_JOB_PROPERTIES,
        run: {
          type: 'string',
          description: "With redeliver: the id of the run whose answer is sent again; default: the job's latest run that has an answer.",
        },
        ...BUDGET_PARAMETERS,
      },
      required: ['action'],
      additionalProperties: false,
    },
  };
}
