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
