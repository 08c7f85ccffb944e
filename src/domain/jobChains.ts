/**
 * Chains of jobs (docs/cron.md, Chains): a job that runs after another job's run ends a given way
 * (`--after <job>[:ok|:failed|:any]`), given that run's id, status and answer. What a link is, when
 * a run's end starts a follower (once per run that ended), and the checks a new link passes:
 * no cycle, and no chain longer than CHAIN_MAX_LINKS.
 */
import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError } from './errors.js';
import { CARRIED_ANSWER_BYTES, firstBytes, type ContextDocument } from './RunContext.js';
import { isFailedStatus, isLastStatus, type LastStatus } from './RunOutcome.js';
import type { Schedule } from './Schedule.js';
import { toIsoUtc } from './zonedTime.js';

/** How the followed job's run must end: `ok`, a failure (error, delivery_failed, blocked_config), or `any` ending. */
export const CHAIN_CONDITIONS = ['ok', 'failed', 'any'] as const;
export type ChainCondition = (typeof CHAIN_CONDITIONS)[number];

/** One job a job runs after, as stored: the followed job's id and the ending that starts this one. */
export interface ChainLink {
  job: string;
  on: ChainCondition;
}

/** The run of a followed job that started (or is to start) this job's run. */
export interface ChainTrigger {
  /** The followed job's id. */
  job: string;
  run_id: string;
  status: LastStatus;
  /** When the followed run ended (ISO 8601 UTC). */
  at: string;
  /** True while the run it starts waits to be claimed. */
  pending: boolean;
  /** The claim time (`claim.at`) of the run it started; null while pending. */
  claimed_at: string | null;
}

/** The fields chains add to a job record. */
export interface JobChainFields {
  /** The jobs whose runs' ends start this job (`--after`); empty or absent for none. */
  after?: ChainLink[];
  /** The last followed run that started, or is to start, a run of this job; null or absent for none. */
  chained_from?: ChainTrigger | null;
}

/** The most links a chain may have, from its first job to its last. */
export const CHAIN_MAX_LINKS = 10;

/** The schedule of a job that runs only after other jobs: it never fires by itself. */
export const AFTER_ONLY_SCHEDULE: Schedule = { kind: 'after', expr: 'after', display: 'only after other jobs' };

/** Whether a schedule written by a user (`--schedule after`, or none with `--after`) means "only after other jobs". */
export function isAfterOnlyText(text: string | null | undefined): boolean {
  return text === undefined || text === null || text.trim() === '' || text.trim().toLowerCase() === 'after';
}

/** A link written `job`, `job:ok`, `job:failed` or `job:any`: the reference (id or name) and the condition. */
export function parseChainLink(text: string): { reference: string; on: ChainCondition } {
  const trimmed = text.trim();
  const colon = trimmed.lastIndexOf(':');
  const suffix =
    colon < 0
      ? ''
      : trimmed
          .slice(colon + 1)
          .trim()
          .toLowerCase();
  const known = (CHAIN_CONDITIONS as readonly string[]).includes(suffix);
  const reference = (known ? trimmed.slice(0, colon) : trimmed).trim();
  if (reference === '') {
    throw new InvalidJobError(
      ERROR_CODES.JOB.INVALID_AFTER,
      `"${text}" names no job to run after; give a job's id or name, optionally followed by :ok, :failed or :any.`,
    );
  }
  return { reference, on: known ? (suffix as ChainCondition) : 'ok' };
}

/** Whether a run that ended with `status` starts a follower linked `on`. */
export function conditionMatches(on: ChainCondition, status: LastStatus): boolean {
  if (on === 'any') return true;
  if (on === 'failed') return isFailedStatus(status);
  return status === 'ok';
}

/** What the chain checks need of each job. */
export type ChainNode = { id: string; name: string } & JobChainFields;

/**
 * Refuses links that would make a cycle (naming it in one sentence) or a chain longer than
 * CHAIN_MAX_LINKS, were job `self` to run after `links`, among `jobs` (self included or not).
 */
export function checkChainLinks(jobs: readonly ChainNode[], self: { id: string; name: string }, links: readonly ChainLink[]): void {
  const byId = new Map(jobs.map((job) => [job.id, job]));
  const nameOf = (id: string) => byId.get(id)?.name ?? id;
  const afterOf = (id: string): string[] =>
    id === self.id ? links.map((link) => link.job) : (byId.get(id)?.after ?? []).map((l) => l.job);
  for (const link of links) {
    if (link.job === self.id) {
      throw new InvalidJobError(ERROR_CODES.JOB.CHAIN_CYCLE, `Job '${self.name}' cannot run after itself.`);
    }
    const path = pathTo(link.job, self.id, afterOf);
    if (path !== null) {
      const hops = path.slice(1).map((id, index) => `${index === 0 ? 'already runs after' : 'which runs after'} '${nameOf(id)}'`);
      const cycle = [...path, link.job].map(nameOf).join(' → ');
      throw new InvalidJobError(
        ERROR_CODES.JOB.CHAIN_CYCLE,
        `Job '${self.name}' cannot run after '${nameOf(link.job)}': '${nameOf(link.job)}' ${hops.join(', ')} (${cycle}).`,
      );
    }
  }
  const upstream = longest(self.id, afterOf);
  const followersOf = (id: string): string[] =>
    [...byId.values(), self].filter((job) => job.id !== id && afterOf(job.id).includes(id)).map((job) => job.id);
  const downstream = longest(self.id, followersOf);
  if (upstream + downstream > CHAIN_MAX_LINKS) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.CHAIN_TOO_DEEP,
      `Job '${self.name}' cannot run after ${links.map((link) => `'${nameOf(link.job)}'`).join(', ')}: the chain would have ${upstream + downstream} links, and a chain has at most ${CHAIN_MAX_LINKS}.`,
    );
  }
}

/** The ids from `from` to `to` following `next`, both included; null when `to` cannot be reached. */
function pathTo(from: string, to: string, next: (id: string) => string[]): string[] | null {
  const seen = new Set<string>();
  const walk = (id: string): string[] | null => {
    if (id === to) return [id];
    if (seen.has(id)) return null;
    seen.add(id);
    for (const each of next(id)) {
      const rest = walk(each);
      if (rest !== null) return [id, ...rest];
    }
    return null;
  };
  return walk(from);
}

/** The most links from `from` following `next` (the links are acyclic once checked). */
function longest(from: string, next: (id: string) => string[], depth = 0): number {
  if (depth > CHAIN_MAX_LINKS + 1) return depth;
  return Math.max(0, ...next(from).map((id) => 1 + longest(id, next, depth + 1)));
}

/** The followed run that ended, as the follower is told of it. */
export interface EndedRun {
  job: string;
  run_id: string;
  status: LastStatus;
  at: Date;
}

/**
 * A follower after the run `ended` of a job it follows: to run now, with the trigger recorded,
 * or null when nothing changes. Once per run that ended (a trigger of the same run is not
 * recorded twice); a paused or completed follower, or one whose link does not match, is left as it
 * is. A follower that is running keeps its run and runs again after it (its next run is now).
 */
export function followerStarted<J extends JobChainFields & { state: string; next_run_at: string | null }>(
  follower: J,
  ended: EndedRun,
): J | null {
  const link = (follower.after ?? []).find((each) => each.job === ended.job);
  if (!link || !conditionMatches(link.on, ended.status)) return null;
  if (follower.chained_from?.run_id === ended.run_id) return null;
  if (follower.state !== 'scheduled' && follower.state !== 'running') return null;
  const at = toIsoUtc(ended.at);
  const trigger: ChainTrigger = { job: ended.job, run_id: ended.run_id, status: ended.status, at, pending: true, claimed_at: null };
  return { ...follower, chained_from: trigger, next_run_at: at };
}

/** A claim's change to the trigger: a pending one is this claim's (claimed at `now`). */
export function chainClaimed(job: JobChainFields, now: Date): JobChainFields {
  const trigger = job.chained_from;
  return trigger?.pending ? { chained_from: { ...trigger, pending: false, claimed_at: toIsoUtc(now) } } : {};
}

/** The followed run that started the run holding `job`'s claim; null for a run its schedule (or a command) started. */
export function chainTriggerOfRun(job: JobChainFields & { claim: { at: string } | null }): ChainTrigger | null {
  const trigger = job.chained_from;
  return trigger && !trigger.pending && job.claim !== null && trigger.claimed_at === job.claim.at ? trigger : null;
}

/** The jobs that run after `id`, with their links to it. */
export function followersOf<J extends ChainNode>(jobs: readonly J[], id: string): Array<{ job: J; on: ChainCondition }> {
  return jobs.flatMap((job) => (job.after ?? []).filter((link) => link.job === id).map((link) => ({ job, on: link.on })));
}

/** A record's chain fields, as far as they can be read; links and a trigger that cannot be are left out. */
export function readChainFields(record: Record<string, unknown>): JobChainFields {
  const links = Array.isArray(record.after) ? record.after.flatMap(readLink) : [];
  const trigger = readTrigger(record.chained_from);
  return { ...(links.length > 0 ? { after: links } : {}), ...(trigger ? { chained_from: trigger } : {}) };
}

function readLink(value: unknown): ChainLink[] {
  if (typeof value !== 'object' || value === null) return [];
  const { job, on } = value as Record<string, unknown>;
  if (typeof job !== 'string' || job === '') return [];
  return [{ job, on: (CHAIN_CONDITIONS as readonly unknown[]).includes(on) ? (on as ChainCondition) : 'ok' }];
}

function readTrigger(value: unknown): ChainTrigger | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const { job, run_id: runId, status, at } = record;
  if (typeof job !== 'string' || typeof runId !== 'string' || !isLastStatus(status) || typeof at !== 'string') return null;
  const claimedAt = typeof record.claimed_at === 'string' ? record.claimed_at : null;
  return { job, run_id: runId, status, at, pending: record.pending === true, claimed_at: claimedAt };
}

/** `job` or `job:failed`, as `--after` takes a link (the id, since names may change). */
export function linkText(link: ChainLink, nameOf: (id: string) => string | null): string {
  const name = nameOf(link.job);
  return `${name === null ? `${link.job} (no such job now)` : `'${name}' (${link.job})`}${link.on === 'ok' ? '' : ` when ${link.on}`}`;
}

/** The followed run as its follower's run is told of it: the job's name, and the run's answer and error as recorded. */
export interface FollowedRun {
  trigger: ChainTrigger;
  /** The followed job's name now; null when it no longer exists. */
  jobName: string | null;
  /** The run as the run ledger keeps it; null when it keeps it no more. */
  run: { answer: string | null; error: string | null } | null;
}

/** The document a follower's run gets: which job it runs after, that job's run id, status and answer (cut to 8 KB). */
export function followedRunDocument({ trigger, jobName, run }: FollowedRun): ContextDocument {
  const job = jobName === null ? `job ${trigger.job}` : `job '${jobName}' (${trigger.job})`;
  const head = `This run was started because it runs after ${job}: that job's run ${trigger.run_id} ended ${trigger.status} at ${trigger.at}.`;
  const parts = [head];
  if (run === null) parts.push('The run ledger no longer keeps that run, so its answer cannot be given.');
  else {
    if (run.error) parts.push(`Its error: ${run.error}`);
    if (run.answer !== null && run.answer.trim() !== '') {
      const { text, leftOut } = firstBytes(run.answer, CARRIED_ANSWER_BYTES);
      const cut = leftOut > 0 ? ` It was cut to its first 8 KB: ${leftOut} more bytes were left out.` : '';
      parts.push(`Its answer follows.${cut}\n\n${text.trimEnd()}`);
    } else parts.push('It gave no answer.');
  }
  return { name: `The run this job runs after (${job})`, content: parts.join('\n\n') };
}

/** A job that runs after another, as `show` lists it under the one it follows. */
export interface ChainFollower {
  id: string;
  name: string;
  on: ChainCondition;
}

/** What a job runs after, in words: `'fetch' (3f2a…), 'build' (9c1b…) when failed`; `nothing` for none. */
export function describeAfter(job: JobChainFields, names: Readonly<Record<string, string>> = {}): string {
  const links = job.after ?? [];
  if (links.length === 0) return 'nothing';
  return links.map((link) => linkText(link, (id) => (Object.hasOwn(names, id) ? names[id]! : null))).join(', ');
}

/** The jobs that run after a job, in words; `none` for none. */
export function describeFollowers(followers: readonly ChainFollower[]): string {
  if (followers.length === 0) return 'none';
  return followers.map((each) => `'${each.name}' (${each.id})${each.on === 'ok' ? '' : ` when ${each.on}`}`).join(', ');
}
