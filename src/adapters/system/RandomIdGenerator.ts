import { injectable } from 'inversify';
import type { IdGenerator } from '../../application/ports/IdGenerator.js';

/** 48 random bits per id: even among a million jobs the odds of any two sharing an id are about 1 in 560. */
const JOB_ID_BYTES = 6;

/**
 * Ids from the operating system's cryptographic random source, through the global Web Crypto
 * object: importing node:crypto would load the whole module on every command's start-up.
 */
@injectable()
export class RandomIdGenerator implements IdGenerator {
  /** 12 lowercase hexadecimal characters from 6 random bytes. */
  jobId(): string {
    const bytes = globalThis.crypto.getRandomValues(new Uint8Array(JOB_ID_BYTES));
    return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  }
}
