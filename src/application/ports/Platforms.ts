import type { ChatAddress, PlatformSender } from './PlatformSender.js';

/** A setting that a platform needs and does not have, and the variable that can give it. */
export interface MissingSetting {
  /** The key under `platforms.<name>`, e.g. `bot_token`. */
  key: string;
  /** The environment variable that overrides it, e.g. `TELEGRAM_BOT_TOKEN`. */
  variable: string;
}

/** What this host knows of one chat platform; never carries a secret. */
export interface PlatformStatus {
  platform: string;
  /** True when every credential is there (config or environment) and it is not turned off. */
  configured: boolean;
  /** The credentials still missing; empty when configured. */
  missing: MissingSetting[];
  /** What follows the colon in a target for the bare platform name; null when none is set. */
  homeChannel: string | null;
  /** Friendly name → id from `platforms.<name>.channels`, laid over the channel directory. */
  aliases: Record<string, string>;
  /** Whether its API can list channels for the channel directory. */
  listsChannels: boolean;
}

/**
 * The chat platforms this host can deliver to, from config.yaml and the environment. Reading
 * statuses contacts nobody and loads no platform code.
 */
export interface Platforms {
  /** Every platform this version knows, configured or not, in a stable order. */
  statuses(): PlatformStatus[];
  /** One platform's status; null for a name this version does not know. */
  status(platform: string): PlatformStatus | null;
  /**
   * The sender of a configured platform, its code loaded on first use and kept. Rejects with an
   * AppError when the platform is not configured.
   */
  sender(platform: string): Promise<PlatformSender>;
  /**
   * Why the platform's API cannot address `address` (a thread where it has none, a kind of
   * destination its configured credentials cannot reach), as one sentence; null when it can.
   * Contacts nobody and loads no platform code.
   */
  addressProblem(platform: string, address: ChatAddress): string | null;
}
