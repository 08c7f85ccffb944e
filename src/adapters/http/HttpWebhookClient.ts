import { inject, injectable } from 'inversify';
import {
  ListenerUnreachableError,
  type ListenerResponse,
  type LocalWebhookClient,
  type SignedDelivery,
} from '../../application/ports/LocalWebhookClient.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { localWebhookUrl, webhookListenerAddress, type WebhookListenerAddress } from '../config/webhookSettings.js';
import { errnoCode } from '../persistence/fileSystem.js';

/** A listener that accepts within this long is healthy; it answers before any agent runs. */
const REQUEST_TIMEOUT_MS = 10_000;

/** `sha256=<hex HMAC-SHA256 of body>`, through Web Crypto so that node:crypto need not load. */
async function hubSignature(secret: string, body: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await globalThis.crypto.subtle.sign('HMAC', key, encoder.encode(body));
  return `sha256=${Buffer.from(mac).toString('hex')}`;
}

/**
 * Posts test deliveries to the listener of `platforms.webhook.extra.host`/`.port` (a wildcard
 * address is reached through the loopback address) the way the first code host does: JSON body,
 * `X-GitHub-Event`, a fresh `X-GitHub-Delivery` and `X-Hub-Signature-256`.
 */
@injectable()
export class HttpWebhookClient implements LocalWebhookClient {
  private readonly address: WebhookListenerAddress;

  constructor(@inject(CONFIG_TOKENS.AgentConfig) config: AgentConfig) {
    this.address = webhookListenerAddress(config);
  }

  urlOf(route: string): string {
    return localWebhookUrl(this.address, route);
  }

  async send({ route, event, payload, secret }: SignedDelivery): Promise<ListenerResponse> {
    const url = this.urlOf(route);
    const body = JSON.stringify(payload);
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'agent-webhook-test',
          'x-github-event': event,
          'x-github-delivery': globalThis.crypto.randomUUID(),
          'x-hub-signature-256': await hubSignature(secret, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      const listener = new URL(url).origin;
      if (error instanceof Error && error.name === 'TimeoutError') {
        throw new ListenerUnreachableError(
          `The webhook listener at ${listener} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s; check that "agent gateway" is running there and try again.`,
          { cause: error },
        );
      }
      const code = errnoCode((error as { cause?: unknown }).cause) ?? errnoCode(error);
      throw new ListenerUnreachableError(
        `No webhook listener answers at ${listener}${code ? ` (${code})` : ''}; start it with "agent gateway" (platforms.webhook.enabled: true) and try again.`,
        { cause: error },
      );
    }
  }
}
