import { injectable } from 'inversify';
import type { IdGenerator } from '../../application/ports/IdGenerator.js';

/** 48 random bits per id: even among a million jobs the odds of any two sharing an id are about 1 in 560. */
const JOB_ID_BYTES = 6;
/** Random bytes fetched at a time: one system call serves this many ids / JOB_ID_BYTES. */
const POOL_BYTES = 4096 - (4096 % JOB_ID_BYTES);
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * Ids from the operating system's cryptographic random source, through the global Web Crypto
 * object (importing node:crypto would load the whole module on every command's start-up). The
 * bytes are fetched a pool at a time, since the webhook listener makes an id per accepted event
 * and one call per id cost more than the rest of the id.
 */
@injectable()
export class RandomIdGenerator implements IdGenerator {
  private readonly pool = new Uint8Array(POOL_BYTES);
  private used = POOL_BYTES;

  /** 12 lowercase hexadecimal characters from 6 random bytes. */
  jobId(): string {
    if (this.used === POOL_BYTES) {
      globalThis.crypto.getRandomValues(this.pool);
      this.used = 0;
    }
    let id = '';
    for (let end = this.used + JOB_ID_BYTES; this.used < end; this.used += 1) id += HEX[this.pool[this.used]!];
    return id;
  }
}
