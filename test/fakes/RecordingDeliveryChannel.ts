import type { PlatformTarget } from '../../src/domain/DeliveryTarget.js';
import { DeliveryError, type DeliveryChannel } from '../../src/application/ports/DeliveryChannel.js';

/** Records deliveries to configured platforms; `failing` platforms throw DeliveryError. */
export class RecordingDeliveryChannel implements DeliveryChannel {
  readonly sent: Array<{ target: PlatformTarget; text: string }> = [];
  readonly failing = new Set<string>();

  constructor(private readonly platforms: readonly string[] = ['telegram']) {}

  isConfigured(platform: string): boolean {
    return this.platforms.includes(platform);
  }

  async deliver(target: PlatformTarget, text: string): Promise<void> {
    if (this.failing.has(target.platform)) throw new DeliveryError(`${target.platform} refused the message`);
    this.sent.push({ target, text });
  }
}
