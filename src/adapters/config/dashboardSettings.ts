import type { AgentConfig } from './AgentConfig.js';
import { isLoopbackHost } from './webhookSettings.js';

export const DEFAULT_DASHBOARD_HOST = '127.0.0.1';
export const DEFAULT_DASHBOARD_PORT = 8645;

/** Where and how the dashboard listens: off unless `dashboard.enabled: true`. */
export interface DashboardSettings {
  enabled: boolean;
  host: string;
  port: number;
  /** `AGENT_DASHBOARD_TOKEN` (wins) or `dashboard.token`; null for none (allowed on a loopback host only). */
  token: string | null;
}

export function dashboardSettingsFrom(config: Pick<AgentConfig, 'dashboard'>, env: NodeJS.ProcessEnv): DashboardSettings {
  const token = env.AGENT_DASHBOARD_TOKEN?.trim() || config.dashboard?.token?.trim() || null;
  return {
    enabled: config.dashboard?.enabled === true,
    host: config.dashboard?.host?.trim() || DEFAULT_DASHBOARD_HOST,
    port: config.dashboard?.port ?? DEFAULT_DASHBOARD_PORT,
    token,
  };
}

/** The sentence that stops the gateway when the dashboard would serve other machines without a token; null when it would not. */
export function openDashboardProblem(config: Pick<AgentConfig, 'dashboard'>, env: NodeJS.ProcessEnv, configFile: string): string | null {
  const settings = dashboardSettingsFrom(config, env);
  if (!settings.enabled || settings.token !== null || isLoopbackHost(settings.host)) return null;
  return (
    `${configFile}: dashboard.host is ${settings.host}, which other machines can reach, and no dashboard token is set; ` +
    'set AGENT_DASHBOARD_TOKEN (or dashboard.token), or set dashboard.host to 127.0.0.1.'
  );
}
