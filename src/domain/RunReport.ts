import type { Job } from './Job.js';
import { formatFileStamp, formatWallClock } from './zonedTime.js';

export interface RunReportInput {
  job: Pick<Job, 'id' | 'name' | 'prompt' | 'schedule'>;
  startedAt: Date;
  timeZone: string;
  status: string;
  response?: string | null;
  error?: string | null;
  answeredBy?: string | null;
}

/** File name of a run's output, in the job's time zone so it sorts by run time. */
export function runReportFileName(startedAt: Date, timeZone: string): string {
  return `${formatFileStamp(startedAt, timeZone)}.md`;
}

/** The Markdown written for every run (decisions §5). */
export function renderRunReport(input: RunReportInput): string {
  const lines = [
    `# Cron job: ${input.job.name}`,
    '',
    `- Job id: ${input.job.id}`,
    `- Run at: ${formatWallClock(input.startedAt, input.timeZone)} (${input.timeZone})`,
    `- Schedule: ${input.job.schedule.display}`,
    `- Status: ${input.status}`,
  ];
  if (input.answeredBy) lines.push(`- Answered by: ${input.answeredBy}`);
  lines.push('', '## Prompt', '', input.job.prompt, '');
  if (input.error) lines.push('## Error', '', input.error, '');
  if (input.response !== undefined && input.response !== null) lines.push('## Response', '', input.response, '');
  return lines.join('\n');
}
