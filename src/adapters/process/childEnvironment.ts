/**
 * This process's environment without provider secrets, for the children the agent starts on a
 * model's behalf or a job's (pre-run scripts, the terminal tool): variables ending in `_API_KEY`
 * or `_API_KEYS`, and `AGENT_CRON_SCHEDULER_TOKEN` (decisions §6).
 */
export function withoutProviderSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !/_API_KEYS?$/i.test(name) && name !== 'AGENT_CRON_SCHEDULER_TOKEN'),
  );
}
