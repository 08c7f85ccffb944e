import { injectable } from 'inversify';
import type { Clock } from '../../application/ports/Clock.js';

/** The machine's clock. */
@injectable()
export class SystemClock implements Clock {
  /** The current instant as the operating system reports it. */
  now(): Date {
    return new Date();
  }
}
