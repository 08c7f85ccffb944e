import type { WebhookBacklog } from '../../../src/application/ports/WebhookBacklog.js';

/** A WebhookBacklog that reports whatever the test set. */
export class FixedWebhookBacklog implements WebhookBacklog {
  constructor(public count = 0) {}

  async waiting(): Promise<number> {
    return this.count;
  }
}
