/** A response that holds `[SILENT]` anywhere, in any case, is not delivered (docs/cron.md). */
export function isSilentResponse(response: string): boolean {
  return response.toLowerCase().includes('[silent]');
}

/** The header and footer `cron.wrap_response` puts around a delivered answer. */
export function wrapResponse(job: { id: string; name: string }, body: string): string {
  return [
    `Cronjob Response: ${job.name}`,
    `(job_id: ${job.id})`,
    '-------------',
    '',
    body,
    '',
    'Note: The agent cannot see this message, and therefore cannot respond to it.',
  ].join('\n');
}

export function failureNotice(jobName: string, reason: string): string {
  return `⚠️ Cron job '${jobName}' failed: ${reason}`;
}

/** What the first run that did not fail after a streak of `failed` failed runs sends. */
export function recoveryNotice(jobName: string, failed: number): string {
  return `✅ Cron job '${jobName}' recovered after ${failed} failed run${failed === 1 ? '' : 's'}`;
}

/** The reason stored on a job paused by `cron.pause_after_failures`. */
export function pausedAfterFailuresReason(failed: number, lastError: string): string {
  const line =
    lastError
      .split('\n')
      .find((each) => each.trim() !== '')
      ?.trim() ?? lastError;
  return `paused after ${failed} consecutive failed runs (cron.pause_after_failures); the last: ${line}`;
}

/** What a job paused by `cron.pause_after_failures` sends, once. */
export function pausedAfterFailuresNotice(jobName: string, reason: string): string {
  return `⏸️ Cron job '${jobName}' ${reason}. Resume it with "agent cron resume" once it is fixed.`;
}
