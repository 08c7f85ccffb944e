import type { ServiceIdentifier } from 'inversify';
import type { SignatureVerifier } from './SignatureVerifier.js';
import type { WebhookListenerSettings } from './WebhookSettings.js';

/**
 * Injection tokens of the webhook accept path, typed like TOKENS (and with the same
 * `Symbol.for` keys, so they can move into tokens.ts without changing identity).
 */
export const WEBHOOK_TOKENS = {
  SignatureVerifier: Symbol.for('agent.SignatureVerifier') as ServiceIdentifier<SignatureVerifier>,
  WebhookListenerSettings: Symbol.for('agent.WebhookListenerSettings') as ServiceIdentifier<WebhookListenerSettings>,
} as const;
