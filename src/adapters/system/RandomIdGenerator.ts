import { randomBytes } from 'node:crypto';
import { injectable } from 'inversify';
import type { IdGenerator } from '../../application/ports/IdGenerator.js';

/** 48 random bits per id: even among a million jobs the odds of any two sharing an id are about 1 in 560. */
const JOB_ID_BYTES = 6;

/** Ids from the operating system's cryptographic random source. */
@injectable()
export class RandomIdGenerator implements IdGenerator {
  /** 12 lowercase hexadecimal characters from 6 random bytes. */
  jobId(): string {
    return randomBytes(JOB_ID_BYTES).toString('hex');
  }
}
