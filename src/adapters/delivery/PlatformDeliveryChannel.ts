import type { PlatformTarget } from '../../domain/DeliveryTarget.js';
import { DeliveryError, type DeliveryChannel } from '../../application/ports/DeliveryChannel.js';
import { errorText } from '../../domain/errors.js';

/** One chat platform's sender, as each platform adapter provides it. */
export interface PlatformSender {
  readonly platform: string;
  send(target: PlatformTarget, text: string): Promise<void>;
}

/**
 * Routes each delivery to the sender of its platform. A platform counts as configured only when
 * a sender for it was registered — which the composition root does for platforms that have
 * credentials in config.yaml.
 */
export class PlatformDeliveryChannel implements DeliveryChannel {
  private readonly senders: Map<string, PlatformSender>;

  constructor(senders: readonly PlatformSender[] = []) {
    this.senders = new Map(senders.map((sender) => [sender.platform, sender]));
  }

  isConfigured(platform: string): boolean {
    return this.senders.has(platform);
  }

  async deliver(target: PlatformTarget, text: string): Promise<void> {
    const sender = this.senders.get(target.platform);
    if (!sender) {
      throw new DeliveryError(`the platform "${target.platform}" is not configured on this host`);
    }
    try {
      await sender.send(target, text);
    } catch (error) {
      if (error instanceof DeliveryError) throw error;
      throw new DeliveryError(errorText(error), { cause: error });
    }
  }
}
