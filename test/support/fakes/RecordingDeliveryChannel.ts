import type { PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { DeliveryError, type DeliveryChannel, type DeliveryReceipt } from '../../../src/application/ports/DeliveryChannel.js';

/**
 * Records deliveries to configured platforms; `failing` platforms throw DeliveryError, with the
 * message `refusals` holds for the platform, if any. Every configured platform's home channel is
 * `home`, unless `homes` says otherwise; deliveries to a `held` platform wait for its promise.
 */
export class RecordingDeliveryChannel implements DeliveryChannel {
  readonly sent: Array<{ target: PlatformTarget; text: string }> = [];
  readonly failing = new Set<string>();
  readonly refusals = new Map<string, string>();
  readonly homes = new Map<string, string | null>();
  /** Platforms whose deliveries wait for this promise before they are sent (a slow or hanging platform). */
  readonly held = new Map<string, Promise<void>>();

  constructor(private readonly platforms: readonly string[] = ['telegram']) {}

  problemWith(target: PlatformTarget): string | null {
    if (!this.platforms.includes(target.platform)) {
      return `Delivery platform "${target.platform}" is not configured: set platforms.${target.platform}.bot_token (or ${target.platform.toUpperCase()}_BOT_TOKEN) in config.yaml or the environment.`;
    }
    if (target.destination === null && this.homeOf(target.platform) === null)
      return `Delivery platform "${target.platform}" has no home channel.`;
    return null;
  }

  /** Channel names (`#ops`) no directory knows, per platform; set by a test. */
  readonly unknownChannels = new Map<string, string[]>();

  async channelProblemWith(target: PlatformTarget): Promise<string | null> {
    if (!this.platforms.includes(target.platform) || target.destination === null) return null;
    return this.unknownChannels.get(target.platform)?.includes(target.destination)
      ? `the ${target.platform} channel "${target.destination}" is unknown.`
      : null;
  }

  homeTargets(): PlatformTarget[] {
    return this.platforms
      .filter((platform) => this.homeOf(platform) !== null)
      .map((platform) => ({ kind: 'platform', platform, destination: this.homeOf(platform), threadId: null }));
  }

  async deliver(target: PlatformTarget, text: string): Promise<DeliveryReceipt> {
    await this.held.get(target.platform);
    if (this.failing.has(target.platform))
      throw new DeliveryError(this.refusals.get(target.platform) ?? `${target.platform} refused the message`);
    this.sent.push({ target, text });
    return {
      platform: target.platform,
      chatId: target.destination ?? this.homeOf(target.platform) ?? '',
      threadId: target.threadId,
      messageIds: [String(this.sent.length)],
    };
  }

  private homeOf(platform: string): string | null {
    return this.homes.has(platform) ? this.homes.get(platform)! : 'home';
  }
}
