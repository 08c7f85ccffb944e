/**
 * When a run that says it is running is over all the same: the one rule shared by a `running`
 * job (its claim) and a `running` record of the run ledger (its claimant), so that the job and
 * the ledger agree on which runs were interrupted.
 */

/** Whether the process named by a claimant lives: true, false, or 'unknown' (another host). */
export type ClaimantLiveness = (claimant: string) => boolean | 'unknown';

/** A claim on a run by a process (`<host>:<pid>`), and when it was taken (ISO 8601 UTC). */
export interface RunningClaim {
  by: string;
  at: string;
}

/** A claim this old is abandoned whatever the process table says (a pid given out again). */
export const MIN_STALE_CLAIM_MS = 30 * 60_000;

/** How old a claim is once abandoned, for an idle budget (null: none, no claim goes stale). */
export function staleClaimAfterMs(idleTimeoutMs: number | null): number | null {
  return idleTimeoutMs === null ? null : Math.max(3 * idleTimeoutMs, MIN_STALE_CLAIM_MS);
}

/**
 * Why a run claimed by `claim` is abandoned at `now`, in words that follow `interrupted: `; null
 * while it may still be going. Abandoned: its process is gone (same host, pid dead), its gateway's
 * lease lapsed (`lapsed`: claimants another host's gateway held), or the claim is older than
 * {@link staleClaimAfterMs}. A run without a claim is abandoned only once stale, counted from
 * `startedAt`, with 30 minutes where there is no idle budget: an older version of the service,
 * still running it, wrote no claimant.
 */
export function runAbandonment(
  claim: RunningClaim | null,
  startedAt: string,
  now: Date,
  alive: ClaimantLiveness,
  lapsed: ReadonlySet<string>,
  idleTimeoutMs: number | null,
): string | null {
  if (claim === null) {
    const age = now.getTime() - Date.parse(startedAt);
    return age > (staleClaimAfterMs(idleTimeoutMs) ?? MIN_STALE_CLAIM_MS)
      ? `its run started at ${startedAt} and no process says it is still running it`
      : null;
  }
  if (alive(claim.by) === false) return `the process ${claim.by} that ran it is gone`;
  if (lapsed.has(claim.by)) return `the gateway ${claim.by} that ran it stopped renewing its lease`;
  const staleAfter = staleClaimAfterMs(idleTimeoutMs);
  if (staleAfter === null) return null;
  return now.getTime() - Date.parse(claim.at) > staleAfter ? `its run started at ${claim.at} and never finished` : null;
}

/**
 * `isAlive` asked once per claimant: the runs or jobs looked at are many, their claimants (the
 * gateways, the commands) few, and each answer reads the process table. For one look only.
 */
export function livenessAskedOnce(isAlive: ClaimantLiveness): ClaimantLiveness {
  const known = new Map<string, boolean | 'unknown'>();
  return (by) => {
    let answer = known.get(by);
    if (answer === undefined) {
      answer = isAlive(by);
      known.set(by, answer);
    }
    return answer;
  };
}
