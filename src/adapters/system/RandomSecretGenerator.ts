import { injectable } from 'inversify';
import type { SecretGenerator } from '../../application/ports/SecretGenerator.js';

/** 256 bits: as strong as the HMAC-SHA256 key it becomes can use. */
const WEBHOOK_SECRET_BYTES = 32;

/** Secrets from the operating system's cryptographic random source, through the global Web Crypto object. */
@injectable()
export class RandomSecretGenerator implements SecretGenerator {
  webhookSecret(): string {
    return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(WEBHOOK_SECRET_BYTES))).toString('base64url');
  }
}
