import {
  ListenerUnreachableError,
  type ListenerResponse,
  type LocalWebhookClient,
  type SignedDelivery,
} from '../../../src/application/ports/LocalWebhookClient.js';

/** Records the deliveries it is asked to send and answers 202, or fails as if no listener ran. */
export class RecordingWebhookClient implements LocalWebhookClient {
  readonly sent: SignedDelivery[] = [];
  listening = true;
  answer: ListenerResponse = { status: 202, body: '{"status":"accepted"}' };

  urlOf(route: string): string {
    return `http://127.0.0.1:8644/webhooks/${route}`;
  }

  async send(delivery: SignedDelivery): Promise<ListenerResponse> {
    if (!this.listening)
      throw new ListenerUnreachableError(
        'No webhook listener answers at http://127.0.0.1:8644 (ECONNREFUSED); start it with "agent gateway".',
      );
    this.sent.push(structuredClone(delivery));
    return this.answer;
  }
}

/** Secrets `secret-1`, `secret-2`, … */
export class SequentialSecrets {
  private next = 1;

  webhookSecret(): string {
    return `secret-${this.next++}`;
  }
}
