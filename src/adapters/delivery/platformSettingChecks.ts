import { environmentVariableFor, isSecretSetting } from '../../domain/platformSettingKeys.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** Settings that are the root of an API or another address the platform is reached at. */
const URL_SETTINGS = ['base_url', 'url', 'homeserver', 'http_url', 'token_url', 'webhook_url'] as const;

/** One setting that cannot be used as it stands: its key and one sentence naming where it comes from. */
export interface PlatformSettingProblem {
  platform: string;
  key: string;
  /** Where the value comes from: the environment wins over config.yaml. */
  source: 'environment' | 'config';
  message: string;
}

/**
 * What is wrong with one platform's settings, never contacting it: an address setting (`base_url`,
 * `url`, `homeserver`, `http_url`, `token_url`, `webhook_url`) that is not an http(s) URL, and, where
 * the platform has them, a `timeout_seconds`, `smtp_port` or `secure` its sender cannot use. Each
 * sentence names the setting where its value comes from: the environment variable, which wins, or
 * the key of config.yaml. The values of secret settings are not shown.
 */
export function platformSettingProblems(settings: PlatformSettings, env: NodeJS.ProcessEnv): PlatformSettingProblem[] {
  const platform = settings.platform;
  const problems: PlatformSettingProblem[] = [];
  const problem = (key: string, expected: string) => {
    const value = settings.get(key)!;
    const variable = environmentVariableFor(platform, key);
    const fromEnvironment = Boolean(env[variable]?.trim());
    const where = fromEnvironment ? `${variable} (which wins over platforms.${platform}.${key})` : `platforms.${platform}.${key}`;
    const shown = isSecretSetting(key) ? 'a value not shown here' : JSON.stringify(value);
    problems.push({
      platform,
      key,
      source: fromEnvironment ? 'environment' : 'config',
      message: `${where} must be ${expected} (got ${shown}); correct it.`,
    });
  };
  for (const key of URL_SETTINGS) {
    const value = settings.get(key);
    if (value !== undefined && !isHttpUrl(value)) problem(key, 'an http:// or https:// URL');
  }
  const timeout = settings.get('timeout_seconds');
  if (timeout !== undefined && !(Number(timeout) > 0)) problem('timeout_seconds', 'a positive number of seconds');
  if (platform === 'email') {
    const port = Number(settings.get('smtp_port'));
    if (!Number.isInteger(port) || port < 1 || port > 65535) problem('smtp_port', 'a port number from 1 to 65535');
    if (!['starttls', 'tls', 'none'].includes(settings.get('secure')?.toLowerCase() ?? 'starttls'))
      problem('secure', 'starttls, tls or none');
  }
  return problems;
}

/** Whether `text` is an absolute http:// or https:// URL with a host. */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
