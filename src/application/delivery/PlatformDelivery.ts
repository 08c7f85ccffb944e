import { inject, injectable, optional } from 'inversify';
import { channelsWithAliases, matchChannel } from '../../domain/delivery/channelDirectory.js';
import { retryDelayMs, MAX_SEND_ATTEMPTS } from '../../domain/delivery/deliveryRetry.js';
import { splitMessage } from '../../domain/delivery/splitMessage.js';
import {
  channelNameIn,
  describeTarget,
  NAMED_CHANNEL_PLATFORMS,
  parseDeliveryTargets,
  type PlatformTarget,
} from '../../domain/DeliveryTarget.js';
import { errorText } from '../../domain/errors.js';
import type { ChannelDirectoryStore } from '../ports/ChannelDirectory.js';
import { DeliveryError, type DeliveryChannel, type DeliveryReceipt } from '../ports/DeliveryChannel.js';
import type { IdGenerator } from '../ports/IdGenerator.js';
import type { Logger } from '../ports/Logger.js';
import { NO_METRICS, type Metrics } from '../ports/Metrics.js';
import { PlatformSendError, type ChatAddress, type PlatformSender } from '../ports/PlatformSender.js';
import type { Platforms, PlatformStatus } from '../ports/Platforms.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';

/**
 * The one delivery path of every chat platform (docs/delivery.md): credential preflight, the home
 * channel, named channels through the directory, splitting at the platform's limit, and retries
 * per part (a 429 waits the platform's hint, a 5xx or a network failure backs off, at most three
 * attempts). Parts go in order; the first part that fails for good ends the delivery, and no
 * part that was confirmed is sent again.
 */
@injectable()
export class PlatformDelivery implements DeliveryChannel {
  constructor(
    @inject(TOKENS.Platforms) private readonly platforms: Platforms,
    @inject(TOKENS.ChannelDirectoryStore) private readonly directory: ChannelDirectoryStore,
    @inject(TOKENS.Timer) private readonly timer: Timer,
    @inject(TOKENS.IdGenerator) private readonly ids: IdGenerator,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.Metrics) @optional() private readonly metrics: Metrics = NO_METRICS,
  ) {}

  problemWith(target: PlatformTarget): string | null {
    const status = this.platforms.status(target.platform);
    if (status === null) return `"${target.platform}" is not a chat platform this version can deliver to.`;
    if (!status.configured) {
      const missing = status.missing.map((setting) => `platforms.${target.platform}.${setting.key} (or ${setting.variable})`);
      return `Delivery platform "${target.platform}" is not configured: set ${missing.join(', ')} in config.yaml or the environment.`;
    }
    if (target.destination === null) {
      if (status.homeChannel === null) {
        const variable = `${target.platform.toUpperCase()}_HOME_CHANNEL`;
        return `Delivery platform "${target.platform}" has no home channel: set platforms.${target.platform}.home_channel (or ${variable}), or name the destination as ${target.platform}:<chat_id>.`;
      }
      const home = homeTargetOf(status);
      if (home === null) {
        return `platforms.${target.platform}.home_channel "${status.homeChannel}" is not a valid ${target.platform} destination; correct it in config.yaml or the environment.`;
      }
      return this.addressProblem(home);
    }
    return this.addressProblem(target);
  }

  /** What the platform's API cannot address, named with the target; a named channel is checked once resolved. */
  private addressProblem(target: PlatformTarget): string | null {
    if (target.destination === null || channelNameIn(target.platform, target.destination) !== null) return null;
    const problem = this.platforms.addressProblem(target.platform, { chatId: target.destination, threadId: target.threadId });
    return problem === null ? null : `Delivery target "${describeTarget(target)}" cannot be delivered: ${problem}`;
  }

  async channelProblemWith(target: PlatformTarget): Promise<string | null> {
    const status = this.platforms.status(target.platform);
    if (status === null || !status.configured || target.destination === null) return null;
    try {
      await this.resolve(status, target.destination, target.threadId);
      return null;
    } catch (error) {
      if (error instanceof DeliveryError) return `Delivery target "${describeTarget(target)}" cannot be resolved now: ${error.message}`;
      throw error;
    }
  }

  homeTargets(): PlatformTarget[] {
    return this.platforms
      .statuses()
      .filter((status) => status.configured)
      .map(homeTargetOf)
      .filter((target): target is PlatformTarget => target !== null);
  }

  async deliver(target: PlatformTarget, text: string): Promise<DeliveryReceipt> {
    try {
      const receipt = await this.deliverOnce(target, text);
      this.metrics.deliveryFinished(target.platform, 'delivered');
      return receipt;
    } catch (error) {
      this.metrics.deliveryFinished(target.platform, 'failed');
      throw error;
    }
  }

  private async deliverOnce(target: PlatformTarget, text: string): Promise<DeliveryReceipt> {
    const problem = this.problemWith(target);
    if (problem) throw new DeliveryError(problem);
    const status = this.platforms.status(target.platform)!;
    const where = target.destination === null ? homeTargetOf(status)! : target;
    const address = await this.resolve(status, where.destination!, where.threadId);
    const unaddressable = this.platforms.addressProblem(target.platform, address);
    if (unaddressable !== null) throw new DeliveryError(unaddressable);
    const sender = await this.platforms.sender(target.platform);
    const parts = splitMessage(text, sender.partLimit);
    const delivery = this.ids.jobId();
    const messageIds: string[] = [];
    for (const [index, part] of parts.entries()) {
      try {
        messageIds.push(await this.sendPart(sender, address, part, `${delivery}.${index + 1}`));
      } catch (error) {
        const delivered = parts.length > 1 ? `${index} of ${parts.length} parts delivered; ` : '';
        throw new DeliveryError(`${delivered}${errorText(error)}`, { cause: error });
      }
    }
    return { platform: target.platform, chatId: address.chatId, threadId: address.threadId, messageIds };
  }

  private async sendPart(sender: PlatformSender, to: ChatAddress, part: string, key: string): Promise<string> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return (await sender.send(to, part, key)).messageId;
      } catch (error) {
        // A sender that throws something else has a bug; retrying it would not help.
        const failure =
          error instanceof PlatformSendError ? error : new PlatformSendError('refused', `${sender.platform}: ${errorText(error)}`);
        const wait = retryDelayMs(failure.kind, attempt, failure.retryAfterMs);
        if (wait === null) {
          throw attempt === MAX_SEND_ATTEMPTS
            ? new PlatformSendError(failure.kind, `${failure.message} (gave up after ${attempt} attempts)`)
            : failure;
        }
        this.log.warn(
          `delivery to ${sender.platform} failed (attempt ${attempt} of ${MAX_SEND_ATTEMPTS}): ${failure.message}; trying again in ${wait / 1000} s`,
        );
        await this.timer.wait(wait);
      }
    }
  }

  /** A `#name` or a friendly name becomes the channel's id: config aliases laid over the directory, then one match. */
  private async resolve(status: PlatformStatus, destination: string, threadId: string | null): Promise<ChatAddress> {
    const named = channelNameIn(status.platform, destination);
    if (named === null) return { chatId: destination, threadId };
    const listed = (await this.directory.load()).platforms[status.platform] ?? [];
    const match = matchChannel(channelsWithAliases(listed, status.aliases), named.name);
    if (match.found) return { chatId: match.id, threadId };
    if (match.reason === 'ambiguous') {
      throw new DeliveryError(
        `the ${status.platform} channel "#${named.name}" matches several channels (${match.candidates.join(', ')}); use the full name or the channel id.`,
      );
    }
    if (!named.required) return { chatId: destination, threadId };
    if (!NAMED_CHANNEL_PLATFORMS.includes(status.platform)) {
      throw new DeliveryError(
        `the ${status.platform} channel "#${named.name}" is unknown; name it under platforms.${status.platform}.channels in config.yaml, or use the chat id.`,
      );
    }
    throw new DeliveryError(
      `the ${status.platform} channel "#${named.name}" is unknown; run "agent channels list --refresh" to see the channels the bot can post to, or use the channel id.`,
    );
  }
}

/** The bare platform name's target, from its home channel; null when it has none or it does not parse. */
function homeTargetOf(status: PlatformStatus): PlatformTarget | null {
  if (status.homeChannel === null) return null;
  try {
    const [target] = parseDeliveryTargets(`${status.platform}:${status.homeChannel}`);
    return target?.kind === 'platform' && target.destination !== null ? target : null;
  } catch {
    return null;
  }
}
