import { chatSettingsFrom } from '../adapters/config/chatSettings.js';
import { existsSync } from 'node:fs';
import type { Container } from 'inversify';
import type { Logger } from '../application/ports/Logger.js';
import type { AgentPaths } from '../application/ports/Settings.js';
import type { AgentConfig } from '../adapters/config/AgentConfig.js';
import { cronSettingsFrom } from '../adapters/config/cronSettings.js';
import { ConfiguredWebhookRoutes } from '../adapters/config/ConfiguredWebhookRoutes.js';
import { openMetricsProblem, webhookListenerEnabled } from '../adapters/config/webhookSettings.js';
import { dashboardProblems } from '../adapters/config/dashboardSettings.js';
import { ConfiguredPlatforms } from '../adapters/delivery/ConfiguredPlatforms.js';
import { fallbackWarning, loadSchedulerProvider } from '../adapters/scheduling/schedulerProviderPlugins.js';
import { displayPath } from '../adapters/shared/displayPath.js';
import { AppError } from '../domain/errors.js';
import { TOKENS } from '../application/ports/tokens.js';
import { sandboxFinding } from '../adapters/process/BubblewrapSandbox.js';
import { NOT_FIRING, schedulerContextFor } from './schedulerProviders.js';
import type { CredentialsLeft, HeldCredentials } from '../adapters/system/environmentScrub.js';
import { childEnvironmentPolicyOf } from '../adapters/process/ChildEnvironments.js';
import { isServiceCredential } from '../domain/childEnvironment.js';

/**
 * What the gateway's start-up check found, one sentence each:
 * - `refused`: the gateway does not start (a wrong value, a route it cannot serve, metrics anyone
 *   could read, a platform setting that cannot be used);
 * - `ignored`: it starts without what the sentence names, and logs it as a warning (a misspelt
 *   key, a provider it cannot use, which the built-in ticker replaces);
 * - `notice`: nothing is wrong, but it is worth knowing (no config.yaml: every default).
 * `agent config check` counts the first two as problems.
 */
export interface StartupFinding {
  effect: 'refused' | 'ignored' | 'notice';
  /** The key of config.yaml concerned ('' for the whole file or none). */
  key: string;
  message: string;
}

/** The first part of the check, on config.yaml and the environment alone. */
export interface ConfigFileCheck {
  /** What the gateway would run with; null when the file is too wrong for anything else to be checked. */
  config: AgentConfig | null;
  findings: StartupFinding[];
}

/**
 * config.yaml as the gateway reads it at start-up: the file (YAML, every wrong value, every
 * unknown key), settings that come from the environment (time zone, timeouts), and a missing file.
 * The loader is loaded only here, as `buildApplicationContainer` does.
 */
export async function checkConfigFile(paths: AgentPaths, env: NodeJS.ProcessEnv): Promise<ConfigFileCheck> {
  const { YamlConfigLoader } = await import('../adapters/config/YamlConfigLoader.js');
  const file = displayPath(paths.configFile);
  const findings: StartupFinding[] = [];
  if (!existsSync(paths.configFile)) {
    const home = existsSync(paths.home) ? '' : ` (nor does the home ${paths.home}; check AGENT_HOME)`;
    findings.push({ effect: 'notice', key: '', message: `${file} does not exist${home}; every setting has its default.` });
  }
  const diagnosis = new YamlConfigLoader(paths.configFile).diagnose();
  for (const problem of diagnosis.problems) {
    findings.push({ effect: problem.stops ? 'refused' : 'ignored', key: problem.key, message: problem.message });
  }
  const config = diagnosis.config;
  if (config === null) return { config: null, findings };
  const warnings: string[] = [];
  try {
    cronSettingsFrom(config, env, warnings, file);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    findings.push({ effect: 'refused', key: '', message: error.message });
    return { config: null, findings };
  }
  for (const warning of warnings) findings.push({ effect: 'ignored', key: '', message: warning });
  // The job store's database: a URL that is no postgres:// URL stops everything that uses it.
  const { configuredDatabase } = await import('../adapters/postgres/jobStoreChoice.js');
  try {
    configuredDatabase(config, env);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    findings.push({ effect: 'refused', key: 'database.url', message: error.message });
    return { config: null, findings };
  }
  return { config, findings };
}

/** What the second part of the check needs: the container built on the config the first part passed. */
export interface StartupContext {
  container: Container;
  config: AgentConfig;
  paths: AgentPaths;
  env: NodeJS.ProcessEnv;
  /** Where `plugins/cron_providers/` ships. */
  installationDir: string;
  /** Where a provider plugin being tried logs; the findings say what matters. */
  log: Logger;
  /** The credentials this process took out of its environment (main.ts), when it did: what is still shown is a notice. */
  credentials?: HeldCredentials;
}

/** The second part of the check, and whether `cron.provider` can be used (false when none is named). */
export interface StartupCheck {
  findings: StartupFinding[];
  providerUsable: boolean;
}

/**
 * Everything else the gateway checks before it listens or fires, contacting nobody: the webhook
 * routes of config.yaml (secrets, `deliver`, `deliver_extra`, filters, toolsets; refused while the
 * listener is on, ignored while it is off, since nothing serves them then), metrics without a
 * token on a listener others can reach, a dashboard others can reach without a token (or with one shorter than 128 bits), every platform's settings (addresses that must be http(s)
 * URLs, numbers), and the provider `cron.provider` names: found, loadable, and usable by its own
 * account (its `problem()`), which the gateway would otherwise replace with the built-in ticker.
 */
export async function checkStartup(context: StartupContext): Promise<StartupCheck> {
  const { config, env } = context;
  const file = displayPath(context.paths.configFile);
  const findings: StartupFinding[] = [];

  const listenerOn = webhookListenerEnabled(config);
  const routes = context.container.get(ConfiguredWebhookRoutes).report();
  for (const route of routes.unusable) {
    for (const message of route.problems) {
      findings.push({
        effect: listenerOn ? 'refused' : 'ignored',
        key: `platforms.webhook.extra.routes.${route.name}`,
        message: listenerOn ? message : `${message.replace(/\.$/, '')}; the listener is off now, but this stops the gateway once it is on.`,
      });
    }
  }
  for (const message of routes.warnings) findings.push({ effect: 'ignored', key: 'platforms.webhook.extra.routes', message });

  const metrics = openMetricsProblem(config, file);
  if (metrics !== null) findings.push({ effect: 'refused', key: 'platforms.webhook.extra.metrics', message: metrics });
  findings.push(...dashboardProblems(config, env, file));

  for (const problem of new ConfiguredPlatforms(config.platforms, env).settingProblems()) {
    findings.push({
      effect: 'refused',
      key: `platforms.${problem.platform}${problem.key ? `.${problem.key}` : ''}`,
      message: problem.source === 'config' ? `${file}: ${problem.message}` : problem.message,
    });
  }

  for (const problem of chatSettingsFrom(config, env).problems)
    findings.push({ effect: 'refused', key: problem.key, message: problem.message });

  // Whether bubblewrap works here: found by running `true` in a sandbox, once per process.
  const sandbox = sandboxFinding(await context.container.get(TOKENS.Sandbox).status());
  if (sandbox) findings.push({ effect: sandbox.refused ? 'refused' : 'ignored', key: 'tools.sandbox', message: sandbox.message });

  const provider = config.cron.provider?.trim();
  let providerUsable = false;
  if (provider) {
    const loaded = await loadSchedulerProvider(
      provider,
      { installationDir: context.installationDir, agentHome: context.paths.home },
      schedulerContextFor(context.container, config, env, NOT_FIRING, context.log),
    );
    providerUsable = loaded.provider !== undefined;
    if (loaded.reason !== undefined)
      findings.push({ effect: 'ignored', key: 'cron.provider', message: `${file}: ${fallbackWarning(provider, loaded.reason)}` });
  }
  const shown = context.credentials ? credentialsShownFinding(context.credentials.stillShown()) : null;
  if (shown) findings.push(shown);
  return { findings, providerUsable };
}

/**
 * Takes out of this process's environment the variables config.yaml names as model keys
 * (`api_key_env`), which only the configuration makes credentials; main.ts took the others out
 * before the configuration was read. Before anything is started.
 */
export function takeOutConfiguredCredentials(credentials: HeldCredentials | undefined, config: AgentConfig): void {
  const policy = childEnvironmentPolicyOf(config);
  if (credentials && policy.modelKeyVariables.length > 0) credentials.takeOut((name) => isServiceCredential(name, policy));
}

/**
 * Credentials the environment this process was started with still shows other processes of its
 * user (not Linux, /proc/self/mem not writable): a notice, since nothing is wrong with the
 * configuration, the gateway starts, and a file is the way out.
 */
export function credentialsShownFinding(left: CredentialsLeft): StartupFinding | null {
  if (left.names.length === 0) return null;
  const first = left.names[0]!;
  return {
    effect: 'notice',
    key: '',
    message:
      `Started with this environment, the gateway cannot hide ${left.names.join(', ')} from other processes of its user (${left.reason ?? 'the system shows them'}); ` +
      `give each as a file instead, such as ${first}_FILE=/run/secrets/${first.toLowerCase()} (see "Secrets in files" in docs/configuration.md).`,
  };
}

/** The findings that stop the gateway. */
export function refusals(findings: readonly StartupFinding[]): string[] {
  return findings.filter((finding) => finding.effect === 'refused').map((finding) => finding.message);
}
