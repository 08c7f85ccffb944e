/** The model-facing job tool; never offered inside a cron-run session (rule 3). */
export const JOB_TOOLSET = 'cronjob';

/** Toolsets a scheduled run gets by default: everything but the job tool. */
export const DEFAULT_CRON_TOOLSETS: readonly string[] = ['terminal', 'web', 'vision', 'clarify'];

/** The recursion guard: whatever was asked for, a cron run cannot create or change jobs. */
export function cronRunToolsets(requested: readonly string[] = DEFAULT_CRON_TOOLSETS): string[] {
  return requested.filter((toolset) => toolset !== JOB_TOOLSET);
}
