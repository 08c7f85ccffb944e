import type { Job } from './Job.js';

/**
 * The inbound turn a bot-chat delivery gives the target chat: a header saying
 * the text comes from a scheduled job, not the user, a blank line, then the answer.
 */
export function botChatMessage(jobName: string, answer: string): string {
  return `[Cronjob "${jobName}" output: a scheduled job, not the user. Review it, act on anything that needs action, and summarize for the chat.]\n\n${answer}`;
}

/**
 * The durable id of one run of a job, the execution id of a bot-chat receipt: the run's claim
 * (`<host>:<pid>` and the time it was claimed), which no other run of the job shares.
 */
export function executionIdOf(job: Pick<Job, 'claim'>, startedAt: Date): string {
  return job.claim ? `${job.claim.by}@${job.claim.at}` : `unclaimed@${startedAt.toISOString()}`;
}

/** The states of a mailbox record, in order: `queued` → `claimed` → `settled` | `failed`. */
export const BOT_CHAT_STATUSES = ['queued', 'claimed', 'settled', 'failed'] as const;
export type BotChatStatus = (typeof BOT_CHAT_STATUSES)[number];
