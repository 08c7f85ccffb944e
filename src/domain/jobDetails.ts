import { describeTarget, parseDeliveryTargets, type DeliveryTarget } from './DeliveryTarget.js';
import { errorText } from './errors.js';
import { jobTimeZone, type Job } from './Job.js';
import { isRecurring, nextRunTime } from './Schedule.js';

/**
 * A job's `deliver` value in its compact form (`telegram:-100123`, `local`, `origin`), for
 * tables. A value that no longer parses is shown as it is stored.
 */
export function compactTargets(deliver: string): string {
  try {
    return parseDeliveryTargets(deliver).map(describeTarget).join(',');
  } catch {
    return deliver;
  }
}

/**
 * Where a job's answers go, in words: one phrase per target, `origin` resolved against the
 * chat the job was created in. A value that no longer parses says so.
 */
export function describeTargets(job: Pick<Job, 'deliver' | 'origin'>): string {
  let targets: DeliveryTarget[];
  try {
    targets = parseDeliveryTargets(job.deliver);
  } catch (error) {
    return `"${job.deliver}", which cannot be delivered to: ${errorText(error)}`;
  }
  return targets.map((target) => targetInWords(target, job.origin)).join('; ');
}

function targetInWords(target: DeliveryTarget, origin: Job['origin']): string {
  switch (target.kind) {
    case 'local':
      return 'the output file only (local)';
    case 'origin':
      if (!origin) return 'the chat it was created in; created on the command line, so the output file only (origin)';
      return `the chat it was created in: ${originInWords(origin)} (origin)`;
    case 'all':
      return 'the home channel of every configured platform (all)';
    case 'bot-chat':
      return target.profile ? `the chat of profile "${target.profile}" (bot-chat)` : 'the chat of this home (bot-chat)';
    case 'platform':
      return `${chatInWords(target.platform, target.destination, target.threadId)} (${describeTarget(target)})`;
  }
}

/**
 * Where a job was made, in words: `telegram chat -100123, thread 7, by alice (111)`, `the bot-chat
 * of profile "ops"`, or that it was made on the command line.
 */
export function describeOrigin(origin: Job['origin']): string {
  return origin ? originInWords(origin) : 'none (made on the command line)';
}

function originInWords(origin: NonNullable<Job['origin']>): string {
  if (origin.platform === 'bot-chat') return `the bot-chat of profile "${origin.chat_id}"`;
  const chat = chatInWords(origin.platform, origin.chat_id, origin.thread_id ?? null);
  if (!origin.user_id) return chat;
  return `${chat}, by ${origin.user_name ? `${origin.user_name} (${origin.user_id})` : origin.user_id}`;
}

function chatInWords(platform: string, destination: string | null, threadId: string | null): string {
  if (destination === null) return `the ${platform} home channel`;
  return `${platform} chat ${destination}${threadId ? `, thread ${threadId}` : ''}`;
}

/** The repeat count in words: "2 of 5 runs", or "no limit (3 runs so far)". */
export function describeRepeat(repeat: Job['repeat']): string {
  const done = `${repeat.completed} run${repeat.completed === 1 ? '' : 's'}`;
  if (repeat.times === null) return `no limit (${done} so far)`;
  return `${repeat.completed} of ${repeat.times} run${repeat.times === 1 ? '' : 's'}`;
}

/**
 * The next `count` times a job will fire, starting at its `next_run_at`. A recurring job's slots
 * are each computed from the one before as the trigger would (cron in the job's own zone, else in
 * `configuredZone`), fewer when its repeat count runs out first; a one-shot has its one time. None
 * for a job that is paused, completed, has no next run, or is a one-shot already running.
 */
export function upcomingRuns(
  job: Pick<Job, 'schedule' | 'state' | 'next_run_at' | 'repeat'> & { timezone?: string | null },
  count: number,
  configuredZone: string,
): Date[] {
  if (job.next_run_at === null || (job.state !== 'scheduled' && job.state !== 'running')) return [];
  const first = new Date(job.next_run_at);
  if (Number.isNaN(first.getTime())) return [];
  if (!isRecurring(job.schedule)) return job.state === 'scheduled' && count > 0 ? [first] : [];
  const remaining =
    job.repeat.times === null ? count : Math.max(0, job.repeat.times - job.repeat.completed - (job.state === 'running' ? 1 : 0));
  const timeZone = jobTimeZone(job, configuredZone);
  const runs: Date[] = [];
  let next: Date | null = first;
  while (next !== null && !Number.isNaN(next.getTime()) && runs.length < Math.min(count, remaining)) {
    runs.push(next);
    next = nextRunTime(job.schedule, next, timeZone);
  }
  return runs;
}

/** A job's toolsets in words: its own list, or the preset; the job tool is never among what runs get. */
export function describeToolsets(job: Pick<Job, 'toolsets'>): string {
  const own = job.toolsets ?? null;
  if (own === null || own.length === 0) return 'agent-cron (the preset)';
  const guarded = own.includes('cronjob') ? ' (cronjob is never given to a cron run)' : '';
  return `${own.join(', ')}${guarded}`;
}

/** A job's working folder in words. */
export function describeWorkdir(job: Pick<Job, 'workdir'>): string {
  return job.workdir ? `${job.workdir} (its AGENTS.md, when there, is given to the agent)` : 'the workspace';
}

/**
 * What a job's runs are given of earlier answers: the jobs named (by name, where `names` knows
 * the id), and its own last answer with `continue`; each cut to 8 KB.
 */
export function describeCarriedAnswers(job: Pick<Job, 'context_from' | 'continue'>, names: Readonly<Record<string, string>> = {}): string {
  const from = (job.context_from ?? []).map((id) => (Object.hasOwn(names, id) ? `'${names[id]}' (${id})` : `${id} (no such job now)`));
  const parts = [
    ...(from.length > 0 ? [`the last ok answer of ${from.join(', ')}`] : []),
    ...(job.continue ? ['its own last ok answer'] : []),
  ];
  return parts.length === 0 ? 'none (a fresh session)' : `${parts.join('; ')}, each cut to 8 KB`;
}
