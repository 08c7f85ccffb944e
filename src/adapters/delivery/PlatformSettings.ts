import { DeliveryBlockedError } from '../../application/ports/DeliveryChannel.js';
import { ownEntry } from '../../domain/ownEntry.js';
import { environmentVariableFor, isSecretSetting } from '../../domain/platformSettingKeys.js';

/** A platform's settings as its sender reads them: config.yaml under it, the environment over that. */
export interface PlatformSettings {
  readonly platform: string;
  /** The value of `key`: `<NAME>_<KEY>` from the environment, else `platforms.<name>.<key>`, else the default; undefined when none. */
  get(key: string): string | undefined;
  /** As `get`, for a key the preflight already checked; throws when it is absent all the same. */
  require(key: string): string;
  /** How long one request may take before the attempt counts as failed. */
  readonly timeoutMs: number;
  /** The values of this platform's secret settings, to be cut out of any text that leaves the sender. */
  readonly secrets: readonly string[];
  /** `platforms.<name>.<key> (or <NAME>_<KEY>)`, for messages that tell a user where to look. */
  where(key: string): string;
}

export const DEFAULT_TIMEOUT_SECONDS = 10;

/** Builds a platform's settings from its config section, the environment and its defaults. */
export function platformSettings(
  platform: string,
  section: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  defaults: Record<string, string>,
): PlatformSettings {
  const get = (key: string): string | undefined => {
    const fromEnv = env[environmentVariableFor(platform, key)]?.trim();
    if (fromEnv) return fromEnv;
    const value = ownEntry(section, key);
    if ((typeof value === 'string' && value.trim() !== '') || typeof value === 'number' || typeof value === 'boolean') {
      return String(value).trim();
    }
    return ownEntry(defaults, key);
  };
  const keys = new Set([...Object.keys(section), ...Object.keys(defaults)]);
  for (const name of Object.keys(env)) {
    const prefix = environmentVariableFor(platform, '');
    if (name.startsWith(prefix)) keys.add(name.slice(prefix.length).toLowerCase());
  }
  const secrets = [...keys]
    .filter((key) => isSecretSetting(key))
    .map(get)
    .filter((value): value is string => value !== undefined && value.length >= 4);
  const seconds = Number(get('timeout_seconds'));
  return {
    platform,
    get,
    require(key) {
      const value = get(key);
      if (value === undefined) throw new DeliveryBlockedError(`${platform} needs ${this.where(key)}.`);
      return value;
    },
    timeoutMs: (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_TIMEOUT_SECONDS) * 1000,
    secrets,
    where: (key) => `platforms.${platform}.${key} (or ${environmentVariableFor(platform, key)})`,
  };
}
