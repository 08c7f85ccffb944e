import { inject, injectable } from 'inversify';
import { describeTarget, parseDeliveryTargets, type PlatformTarget } from '../../domain/DeliveryTarget.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { InvalidDeliveryError, errorText } from '../../domain/errors.js';
import { DeliveryBlockedError, DeliveryError, type DeliveryChannel, type DeliveryReceipt } from '../ports/DeliveryChannel.js';
import { TOKENS } from '../ports/tokens.js';

export interface SendMessageInput {
  /** One target or several separated by commas, as in a job's `deliver`. */
  target: string;
  text: string;
}

export interface SentMessage {
  target: string;
  receipt: DeliveryReceipt;
}

/**
 * `agent send`: delivers a text through the same path as a job's answer. Every target is checked
 * before anything is sent; each is then delivered on its own. Throws DeliveryError naming each
 * target that failed, after the others were delivered.
 */
@injectable()
export class SendMessage {
  constructor(@inject(TOKENS.DeliveryChannel) private readonly channel: DeliveryChannel) {}

  async execute(input: SendMessageInput): Promise<SentMessage[]> {
    if (input.text.trim() === '')
      throw new InvalidDeliveryError(
        ERROR_CODES.DELIVERY.EMPTY,
        'There is nothing to send: give the text as an argument, or "-" to read it from stdin.',
      );
    const targets = this.platformTargets(input.target);
    const problems = targets.map((target) => this.channel.problemWith(target)).filter((problem) => problem !== null);
    if (problems.length > 0) throw new DeliveryBlockedError(problems.join(' '));
    const sent: SentMessage[] = [];
    const failures: string[] = [];
    for (const target of targets) {
      try {
        sent.push({ target: describeTarget(target), receipt: await this.channel.deliver(target, input.text) });
      } catch (error) {
        failures.push(`${describeTarget(target)}: ${errorText(error)}`);
      }
    }
    if (failures.length > 0) {
      const delivered = sent.length > 0 ? ` (delivered to ${sent.map((one) => one.target).join(', ')})` : '';
      throw new DeliveryError(`Delivery failed to ${failures.join('; ')}${delivered}`);
    }
    return sent;
  }

  private platformTargets(text: string): PlatformTarget[] {
    const targets: PlatformTarget[] = [];
    for (const target of parseDeliveryTargets(text)) {
      if (target.kind === 'platform') targets.push(target);
      else if (target.kind === 'all') {
        const homes = this.channel.homeTargets();
        if (homes.length === 0)
          throw new DeliveryBlockedError('"all" names no platform: none is configured with a home channel (see "agent platforms").');
        targets.push(...homes);
      } else {
        throw new InvalidDeliveryError(
          ERROR_CODES.DELIVERY.INVALID,
          `"${describeTarget(target)}" is not a chat platform; agent send delivers to targets such as telegram:<chat_id>, slack:#general or all.`,
        );
      }
    }
    return targets;
  }
}
