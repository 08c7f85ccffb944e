import type { CreateJobInput } from '../../application/cron/CreateJob.js';
import type { EditJobInput } from '../../application/cron/EditJob.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { InvalidInputError } from '../../domain/errors.js';
import { scheduleHint } from '../../domain/Schedule.js';

/**
 * The JSON bodies the dashboard's API takes for a new job and a job's changes: the fields of the
 * New job form and of `agent cron create|edit` flags, in snake_case. A script is not among them:
 * the dashboard sets none (as its form does); `agent cron edit --script` does.
 */
const TEXT_FIELDS = ['schedule', 'prompt', 'name', 'deliver', 'timezone', 'model', 'provider'] as const;
const FIELDS: readonly string[] = [...TEXT_FIELDS, 'skills', 'repeat', 'catch_up', 'toolsets', 'workdir', 'context_from', 'continue'];

type Body = Record<string, unknown>;

function refuse(message: string): never {
  throw new InvalidInputError(ERROR_CODES.DASHBOARD.INVALID_REQUEST, message);
}

function objectBody(body: unknown): Body {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) refuse('The request body must be a JSON object.');
  const unknown = Object.keys(body).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0)
    refuse(`The job has no field ${unknown.map((key) => `"${key}"`).join(', ')}; the fields are ${FIELDS.join(', ')}.`);
  return body as Body;
}

function text(body: Body, key: string, nullable: boolean): string | null | undefined {
  const value = body[key];
  if (value === undefined || (value === null && nullable)) return value as null | undefined;
  if (typeof value !== 'string') refuse(`"${key}" must be ${nullable ? 'a string or null' : 'a string'}.`);
  return value;
}

function skills(body: Body): string[] | undefined {
  const value = body.skills;
  if (value === undefined) return undefined;
  // The form's own spelling, "rss, web", is taken too.
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list) || list.some((skill) => typeof skill !== 'string'))
    refuse('"skills" must be a list of skill names (or one comma-separated string).');
  return (list as string[]).map((skill) => skill.trim()).filter((skill) => skill !== '');
}

function repeat(body: Body): number | null | undefined {
  const value = body.repeat;
  if (value === undefined || value === null) return value as null | undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    refuse('"repeat" must be a whole number of runs, 1 or more, or null for no limit.');
  return value;
}

function catchUp(body: Body): 'once' | 'skip' | null | undefined {
  const value = body.catch_up;
  if (value === undefined || value === null) return value as null | undefined;
  if (value !== 'once' && value !== 'skip') refuse('"catch_up" must be "once", "skip" or null.');
  return value;
}

/** A list of names (or one comma-separated string); null stands for none when `nullable`. */
function nameList(body: Body, key: string, nullable: boolean): string[] | null | undefined {
  const value = body[key];
  if (value === undefined || (value === null && nullable)) return value as null | undefined;
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list) || list.some((name) => typeof name !== 'string'))
    refuse(`"${key}" must be a list of names (or one comma-separated string)${nullable ? ', or null' : ''}.`);
  return (list as string[]).map((name) => name.trim()).filter((name) => name !== '');
}

/** The per-job toolsets, working folder and answers carried forward, for create and edit alike. */
function perJobFields(body: Body): Pick<EditJobInput, 'toolsets' | 'workdir' | 'context_from' | 'continue'> {
  const given: Pick<EditJobInput, 'toolsets' | 'workdir' | 'context_from' | 'continue'> = {};
  const toolsets = nameList(body, 'toolsets', true);
  if (toolsets !== undefined) given.toolsets = toolsets;
  const workdir = text(body, 'workdir', true);
  if (workdir !== undefined) given.workdir = workdir === null || workdir.trim() === '' ? null : workdir;
  const contextFrom = nameList(body, 'context_from', false);
  if (contextFrom !== undefined && contextFrom !== null) given.context_from = contextFrom;
  if (body.continue !== undefined) {
    if (typeof body.continue !== 'boolean') refuse('"continue" must be true or false.');
    given.continue = body.continue;
  }
  return given;
}

/** `POST /api/jobs`: `schedule` and `prompt` are required, as `agent cron create` asks for both. */
export function createJobBody(raw: unknown): CreateJobInput {
  const body = objectBody(raw);
  const schedule = text(body, 'schedule', false);
  if (schedule === undefined || schedule === null || schedule.trim() === '')
    refuse(`A new job needs a "schedule", e.g. ${scheduleHint()}.`);
  const prompt = text(body, 'prompt', false) ?? '';
  const input: CreateJobInput = { schedule, prompt };
  for (const key of ['name', 'deliver', 'timezone', 'model', 'provider'] as const) {
    const value = text(body, key, true);
    if (value !== undefined) input[key] = value;
  }
  const given = { skills: skills(body), repeat: repeat(body), catch_up: catchUp(body) };
  if (given.skills !== undefined) input.skills = given.skills;
  if (given.repeat !== undefined) input.repeat = given.repeat;
  if (given.catch_up !== undefined) input.catch_up = given.catch_up;
  return { ...input, ...perJobFields(body) };
}

/** `PATCH /api/jobs/<id>`: only the fields given change, as with `agent cron edit`. */
export function editJobBody(job: string, raw: unknown): EditJobInput {
  const body = objectBody(raw);
  const changes: EditJobInput = { job };
  for (const key of ['schedule', 'prompt', 'name', 'deliver'] as const) {
    const value = text(body, key, false);
    if (value !== undefined && value !== null) changes[key] = value;
  }
  for (const key of ['timezone', 'model', 'provider'] as const) {
    const value = text(body, key, true);
    if (value !== undefined) changes[key] = value;
  }
  const given = { skills: skills(body), repeat: repeat(body), catch_up: catchUp(body) };
  if (given.skills !== undefined) changes.skills = given.skills;
  if (given.repeat !== undefined) changes.repeat = given.repeat;
  if (given.catch_up !== undefined) changes.catch_up = given.catch_up;
  Object.assign(changes, perJobFields(body));
  if (Object.keys(changes).length === 1) refuse(`Nothing to change: give one or more of ${FIELDS.join(', ')}.`);
  return changes;
}
