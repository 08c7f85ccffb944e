import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AgentPaths } from '../../application/ports/Settings.js';

/** `$AGENT_HOME`, else `~/.agent`. */
export function agentHomeFrom(env: NodeJS.ProcessEnv): string {
  const fromEnv = env.AGENT_HOME?.trim();
  return resolve(fromEnv ? fromEnv : join(homedir(), '.agent'));
}

export function agentPathsFor(home: string): AgentPaths {
  const cronDir = join(home, 'cron');
  const webhooksDir = join(home, 'webhooks');
  return {
    home,
    configFile: join(home, 'config.yaml'),
    cronDir,
    jobsFile: join(cronDir, 'jobs.json'),
    tickLockFile: join(cronDir, '.tick.lock'),
    outputDir: join(cronDir, 'output'),
    scriptsDir: join(home, 'scripts'),
    skillsDir: join(home, 'skills'),
    memoriesDir: join(home, 'memories'),
    webhooksDir,
    webhookInboxDir: join(webhooksDir, 'inbox'),
    webhookSubscriptionsFile: join(home, 'webhook_subscriptions.json'),
    channelDirectoryFile: join(home, 'channel_directory.json'),
    runsDir: join(home, 'runs'),
  };
}
