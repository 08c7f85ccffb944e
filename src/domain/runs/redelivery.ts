import { escapeControlCharacters } from '../controlCharacters.js';
import { isSilentResponse } from '../response.js';
import type { RunOutcome } from '../RunOutcome.js';
import type { RunClaim, RunDelivery, RunRecord } from './RunRecord.js';

/**
 * How long a redelivery claim holds when its process cannot be checked (another host): longer
 * than any delivery takes with its retries. A claim of a process known to be gone holds no longer.
 */
export const REDELIVERY_CLAIM_MS = 10 * 60_000;

/** Whether `claim` no longer holds at `now`: its process is gone, or it was taken more than REDELIVERY_CLAIM_MS ago. */
export function isAbandonedClaim(claim: RunClaim, now: Date, alive: boolean | 'unknown'): boolean {
  if (alive === false) return true;
  const at = Date.parse(claim.at);
  return Number.isNaN(at) || at < now.getTime() - REDELIVERY_CLAIM_MS;
}

/**
 * How a run's answer went, from how it went to each target: a failure wins over an admission to a
 * bot-chat mailbox (whose receipts are kept either way); `ok` when nothing failed or was queued.
 * The delivery error has one line per failed target, `<target>: <why>`.
 */
export function outcomeOfDeliveries(deliveries: readonly RunDelivery[]): RunOutcome {
  const failures = deliveries
    .filter((delivery) => delivery.outcome === 'failed')
    .map((delivery) => `${escapeControlCharacters(delivery.target)}: ${delivery.error ?? 'not delivered'}`);
  const queued = deliveries.filter((delivery) => delivery.outcome === 'queued').flatMap((delivery) => delivery.message_ids);
  if (failures.length > 0) return { status: 'delivery_failed', deliveryError: failures.join('\n'), queued };
  return queued.length > 0 ? { status: 'delivery_queued', receipts: queued } : { status: 'ok' };
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? text
  );
}

/**
 * Why a run's recorded answer cannot be delivered again, as what follows "it" in a sentence
 * about the run ("… has no answer to deliver: it failed (idle timeout …)"); null when it can. A
 * run still going on, a run without an answer (it failed, was not run, or its agent gave none)
 * and — where `[SILENT]` means "nothing to report", as for cron runs — a silent answer have
 * nothing to deliver.
 */
export function whyNotRedeliverable(
  run: Pick<RunRecord, 'status' | 'answer' | 'error'>,
  options: { silentIsNothing: boolean },
): string | null {
  if (run.status === 'running') return 'is still going on (its answer is delivered when it ends)';
  if (run.answer === null) {
    const why = run.error === null ? '' : ` (${firstLine(run.error)})`;
    if (run.status === 'blocked_config') return `was not run${why}`;
    if (run.status === 'error') return `failed${why}`;
    return 'gave no answer';
  }
  if (options.silentIsNothing && isSilentResponse(run.answer)) return 'answered [SILENT], which is never delivered';
  return null;
}

/** The newest run, of runs listed newest first, whose answer can be delivered again; null when none can. */
export function latestRedeliverable(runs: readonly RunRecord[], options: { silentIsNothing: boolean }): RunRecord | null {
  return runs.find((run) => whyNotRedeliverable(run, options) === null) ?? null;
}

/**
 * Which targets (as written, `telegram:-100123`) a redelivery sends to, of those it can send to
 * (`candidates`: chat and bot-chat targets, never `local`, whose output file holds the answer
 * already): the ones the run's answer did not reach (`previous`, the run's deliveries), or all of
 * them again when it reached every one.
 */
export function targetsToRedeliver(candidates: readonly string[], previous: readonly RunDelivery[]): string[] {
  const reached = new Set(previous.filter((delivery) => delivery.outcome !== 'failed').map((delivery) => delivery.target));
  const missed = candidates.filter((target) => !reached.has(target));
  return missed.length > 0 ? missed : [...candidates];
}

/** The run's deliveries with those of a redelivery in their place (by target); new targets come last. */
export function mergeDeliveries(previous: readonly RunDelivery[], again: readonly RunDelivery[]): RunDelivery[] {
  const byTarget = new Map(again.map((delivery) => [delivery.target, delivery]));
  const merged = previous.map((delivery) => byTarget.get(delivery.target) ?? delivery);
  const known = new Set(previous.map((delivery) => delivery.target));
  return [...merged, ...again.filter((delivery) => !known.has(delivery.target))];
}
