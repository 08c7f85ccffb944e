import { DeliveryBlockedError } from '../../application/ports/DeliveryChannel.js';
import type { ChatAddress, PlatformSender } from '../../application/ports/PlatformSender.js';
import type { Platforms, PlatformStatus } from '../../application/ports/Platforms.js';
import { ownEntry } from '../../domain/ownEntry.js';
import { PLATFORM_SPECS, type PlatformSpec } from './platformCatalog.js';
import { environmentVariableFor } from '../../domain/platformSettingKeys.js';
import { platformSettings, type PlatformSettings } from './PlatformSettings.js';
import { platformSettingProblems, type PlatformSettingProblem } from './platformSettingChecks.js';

/**
 * The chat platforms of config.yaml (`platforms.<name>`) and the environment (`<NAME>_<KEY>`,
 * which wins). A platform is configured when every required setting has a value (and, where it
 * takes one of several sets of credentials, every key of one set). Senders are created on first
 * use, their code loaded then, and kept for the life of the process.
 */
export class ConfiguredPlatforms implements Platforms {
  private readonly settings = new Map<string, PlatformSettings>();
  private readonly senders = new Map<string, Promise<PlatformSender>>();

  constructor(
    private readonly sections: Readonly<Record<string, unknown>>,
    private readonly env: NodeJS.ProcessEnv,
    private readonly specs: Readonly<Record<string, PlatformSpec>> = PLATFORM_SPECS,
  ) {}

  statuses(): PlatformStatus[] {
    return Object.keys(this.specs).map((platform) => this.status(platform)!);
  }

  status(platform: string): PlatformStatus | null {
    const spec = ownEntry(this.specs, platform);
    if (spec === undefined) return null;
    const settings = this.settingsOf(platform, spec);
    const absent = (keys: readonly string[]) => keys.filter((key) => settings.get(key) === undefined);
    const missing = [...absent(spec.required), ...missingAlternative(spec.alternatives ?? [], absent)].map((key) => ({
      key,
      variable: environmentVariableFor(platform, key),
    }));
    return {
      platform,
      configured: missing.length === 0,
      missing,
      homeChannel: settings.get('home_channel') ?? spec.defaultHomeChannel?.(settings) ?? null,
      aliases: this.aliasesOf(platform),
      listsChannels: spec.listsChannels,
    };
  }

  sender(platform: string): Promise<PlatformSender> {
    let sender = this.senders.get(platform);
    if (sender === undefined) {
      const status = this.status(platform);
      if (status === null || !status.configured) {
        return Promise.reject(new DeliveryBlockedError(`Delivery platform "${platform}" is not configured on this host.`));
      }
      const spec = ownEntry(this.specs, platform)!;
      sender = spec.load().then((module) => module.createSender(this.settingsOf(platform, spec)));
      sender.catch(() => this.senders.delete(platform));
      this.senders.set(platform, sender);
    }
    return sender;
  }

  addressProblem(platform: string, address: ChatAddress): string | null {
    const spec = ownEntry(this.specs, platform);
    if (spec === undefined) return null;
    // A setting that cannot be used (an API root that is no http(s) URL) is refused before anything is sent, not retried.
    const setting = platformSettingProblems(this.settingsOf(platform, spec), this.env)[0];
    if (setting !== undefined) return setting.message.replace(/\.$/, '');
    if (spec.addressProblem === undefined) return null;
    return spec.addressProblem(address, this.settingsOf(platform, spec));
  }

  /**
   * Every platform setting that cannot be used as it stands, configured platform or not: a
   * `platforms.<name>` that is not a mapping, an address that is no http(s) URL, a number that is
   * none (platformSettingProblems). For the gateway's start-up check; contacts nobody.
   */
  settingProblems(): PlatformSettingProblem[] {
    const problems: PlatformSettingProblem[] = [];
    for (const [platform, spec] of Object.entries(this.specs)) {
      const section = ownEntry(this.sections, platform);
      if (section !== undefined && section !== null && (typeof section !== 'object' || Array.isArray(section))) {
        problems.push({
          platform,
          key: '',
          source: 'config',
          message: `platforms.${platform} must be a mapping of settings such as "bot_token:" (got ${Array.isArray(section) ? 'a list' : `a ${typeof section}`}).`,
        });
        continue;
      }
      problems.push(...platformSettingProblems(this.settingsOf(platform, spec), this.env));
    }
    return problems;
  }

  private settingsOf(platform: string, spec: PlatformSpec): PlatformSettings {
    let settings = this.settings.get(platform);
    if (settings === undefined) {
      settings = platformSettings(platform, this.sectionOf(platform), this.env, { ...spec.defaults });
      this.settings.set(platform, settings);
    }
    return settings;
  }

  private sectionOf(platform: string): Record<string, unknown> {
    const section = ownEntry(this.sections, platform);
    return section !== null && typeof section === 'object' && !Array.isArray(section) ? (section as Record<string, unknown>) : {};
  }

  /** `channels: {general: C0123}`; entries whose id is not text are ignored. */
  private aliasesOf(platform: string): Record<string, string> {
    const channels = this.sectionOf(platform).channels;
    if (channels === null || typeof channels !== 'object' || Array.isArray(channels)) return {};
    const aliases: Record<string, string> = {};
    for (const [name, id] of Object.entries(channels)) {
      if (typeof id === 'string' || typeof id === 'number') aliases[name.replace(/^#/, '')] = String(id);
    }
    return aliases;
  }
}

/**
 * The keys still missing from a platform's alternative credentials: none when one set is
 * complete, else those of the set the user has gone furthest with, the first listed on a tie, so
 * that a half-done set is named rather than another one.
 */
function missingAlternative(alternatives: ReadonlyArray<readonly string[]>, absent: (keys: readonly string[]) => string[]): string[] {
  let closest: string[] | null = null;
  let closestPresent = -1;
  for (const keys of alternatives) {
    const missing = absent(keys);
    if (missing.length === 0) return [];
    const present = keys.length - missing.length;
    if (present > closestPresent) [closest, closestPresent] = [missing, present];
  }
  return closest ?? [];
}
