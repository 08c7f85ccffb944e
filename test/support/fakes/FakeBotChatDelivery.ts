import {
  BotChatDeliveryError,
  type BotChatDelivery,
  type BotChatReceipt,
  type BotChatRequest,
} from '../../../src/application/ports/BotChatDelivery.js';

/**
 * Bot-chat delivery in memory: profiles that exist, whether a live owner holds each chat
 * (`null` is the job's own home), the receipts already in the mailboxes, and what was delivered.
 * The receipt id is the request's identity in plain text, which is enough to tell runs apart.
 */
export class FakeBotChatDelivery implements BotChatDelivery {
  readonly profiles = new Set<string>();
  readonly liveOwners = new Set<string | null>();
  readonly receipts = new Set<string>();
  readonly delivered: Array<BotChatRequest & { lane: BotChatReceipt['lane'] }> = [];
  /** When set, the command-line lane fails with this stderr. */
  commandLineFailure: string | null = null;

  async problemWith(profile: string | null): Promise<string | null> {
    if (profile === null || this.profiles.has(profile)) return null;
    return `The bot-chat profile "${profile}" does not exist; create it with agent chat --profile ${profile} --create-if-missing.`;
  }

  async deliver(request: BotChatRequest): Promise<BotChatReceipt> {
    const receipt = [request.profile ?? '', request.jobId, request.executionId].join('|');
    if (this.receipts.has(receipt)) throw new BotChatDeliveryError(`receipt ${receipt} already exists; it is not delivered again.`);
    this.receipts.add(receipt);
    if (this.liveOwners.has(request.profile)) {
      this.delivered.push({ ...request, lane: 'queued' });
      return { lane: 'queued', receipt };
    }
    if (this.commandLineFailure !== null) throw new BotChatDeliveryError(`agent chat failed: ${this.commandLineFailure}`);
    this.delivered.push({ ...request, lane: 'delivered' });
    return { lane: 'delivered', receipt };
  }
}
