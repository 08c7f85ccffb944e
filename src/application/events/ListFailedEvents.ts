import { inject, injectable } from 'inversify';
import type { EventOutbox, FailedEvent } from '../ports/EventOutbox.js';
import { TOKENS } from '../ports/tokens.js';

/** `agent events failed`: the events given up on, newest first, at most `limit`. */
@injectable()
export class ListFailedEvents {
  constructor(@inject(TOKENS.EventOutbox) private readonly outbox: EventOutbox) {}

  execute(input: { limit: number }): Promise<FailedEvent[]> {
    return this.outbox.failed(input.limit);
  }
}
