/** `[SILENT]` alone, first, or on the last line suppresses delivery (docs/cron.md). */
export function isSilentResponse(response: string): boolean {
  const trimmed = response.trim();
  const marker = '[silent]';
  if (trimmed.toLowerCase().startsWith(marker)) return true;
  const lines = trimmed.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
  return (lines.at(-1) ?? '').toLowerCase() === marker;
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
