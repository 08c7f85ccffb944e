import { createHmac } from 'node:crypto';

/** The headers that sign `body` as Standard Webhooks: `webhook-id`, `webhook-timestamp` (unix seconds), `webhook-signature` (`v1,<base64>`). */
export function standardWebhookHeaders(id: string, at: Date, body: string, key: Uint8Array): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
