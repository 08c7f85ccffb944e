/** Secrets for new webhook subscriptions. */
export interface SecretGenerator {
  /** 32 bytes from a cryptographic random source, base64url without padding (43 characters). */
  webhookSecret(): string;
}
