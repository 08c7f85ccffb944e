import type { AgentConfig } from './AgentConfig.js';
import { isLoopbackHost } from './webhookSettings.js';

export const DEFAULT_DASHBOARD_HOST = '127.0.0.1';
export const DEFAULT_DASHBOARD_PORT = 8645;
/** The shortest token taken on a dashboard other machines can reach: 128 bits as base64. */
export const SHORTEST_OPEN_DASHBOARD_TOKEN = 22;

/** Where and how the dashboard listens: off unless `dashboard.enabled: true`. */
export interface DashboardSettings {
  enabled: boolean;
  host: string;
  port: number;
  /** `AGENT_DASHBOARD_TOKEN` (wins) or `dashboard.token`; null for none (allowed on a loopback host only). */
  token: string | null;
  /** `dashboard.allowed_hosts` (used with a token only); null: not set, the listen address. */
  allowedHosts: string[] | null;
  /** `dashboard.trust_proxy`: read X-Forwarded-Proto, -Host and -For from the proxy in front. */
  trustProxy: boolean;
}

export function dashboardSettingsFrom(config: Pick<AgentConfig, 'dashboard'>, env: NodeJS.ProcessEnv): DashboardSettings {
  const token = env.AGENT_DASHBOARD_TOKEN?.trim() || config.dashboard?.token?.trim() || null;
  return {
    enabled: config.dashboard?.enabled === true,
    host: config.dashboard?.host?.trim() || DEFAULT_DASHBOARD_HOST,
    port: config.dashboard?.port ?? DEFAULT_DASHBOARD_PORT,
    token,
    allowedHosts: config.dashboard?.allowed_hosts?.map((host) => host.trim()) ?? null,
    trustProxy: config.dashboard?.trust_proxy === true,
  };
}

/** What the gateway refuses (or ignores) in the dashboard's settings, each in one sentence. */
export interface DashboardProblem {
  effect: 'refused' | 'ignored';
  key: string;
  message: string;
}

/**
 * The dashboard's settings that stop the gateway: serving other machines without a token, or
 * with a token shorter than 128 bits; and `allowed_hosts` without a token, which is ignored.
 */
export function dashboardProblems(config: Pick<AgentConfig, 'dashboard'>, env: NodeJS.ProcessEnv, configFile: string): DashboardProblem[] {
  const settings = dashboardSettingsFrom(config, env);
  if (!settings.enabled) return [];
  const problems: DashboardProblem[] = [];
  const open = !isLoopbackHost(settings.host);
  if (open && settings.token === null) {
    problems.push({
      effect: 'refused',
      key: 'dashboard.host',
      message:
        `${configFile}: dashboard.host is ${settings.host}, which other machines can reach, and no dashboard token is set; ` +
        'set AGENT_DASHBOARD_TOKEN (or dashboard.token), or set dashboard.host to 127.0.0.1.',
    });
  }
  if (open && settings.token !== null && settings.token.length < SHORTEST_OPEN_DASHBOARD_TOKEN) {
    const source = env.AGENT_DASHBOARD_TOKEN?.trim() ? 'AGENT_DASHBOARD_TOKEN' : 'dashboard.token';
    const length = settings.token.length;
    problems.push({
      effect: 'refused',
      key: 'dashboard.token',
      message:
        `${configFile}: dashboard.host is ${settings.host}, which other machines can reach, and ${source} is only ${length} character${length === 1 ? '' : 's'} long; ` +
        `set a token of at least ${SHORTEST_OPEN_DASHBOARD_TOKEN} characters (128 bits), such as the output of "openssl rand -base64 24", or set dashboard.host to 127.0.0.1.`,
    });
  }
  if (settings.token === null && settings.allowedHosts !== null) {
    problems.push({
      effect: 'ignored',
      key: 'dashboard.allowed_hosts',
      message: `${configFile}: dashboard.allowed_hosts is ignored without a dashboard token: a dashboard without one answers only at 127.0.0.1, localhost and [::1]; set AGENT_DASHBOARD_TOKEN (or dashboard.token) to serve other names.`,
    });
  }
  return problems;
}
