/**
 * The recursion guard of a cron run: every process a cron run starts (the agent
 * program, the pre-run script, the terminal tool's commands) carries this variable, set to the
 * job's id, and the commands that create, change, run or schedule jobs refuse when it is set.
 */
export const CRON_RUN_VARIABLE = 'AGENT_CRON_RUN';
