import { AppError } from '../../domain/errors.js';
import type { PlatformTarget } from '../../domain/DeliveryTarget.js';

/** A delivery that did not reach its target; `message` goes into `last_delivery_error`. */
export class DeliveryError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('DELIVERY.FAILED', message, options);
  }
}

/** Sends finished answers to chat platforms. */
export interface DeliveryChannel {
  /** Whether `platform` has an adapter with credentials (credential preflight); contacts nobody. */
  isConfigured(platform: string): boolean;
  /**
   * Delivers `text` to `target`, resolving the destination at this moment (a null destination is
   * the platform's home channel). Resolves once the platform confirmed; throws DeliveryError.
   */
  deliver(target: PlatformTarget, text: string): Promise<void>;
}
