import type { ProcessIdentity } from '../../../src/application/ports/ProcessIdentity.js';

/** This process is `test-host:1`; other claimants are alive unless listed as dead. */
export class FakeProcessIdentity implements ProcessIdentity {
  readonly dead = new Set<string>();

  constructor(private readonly self = 'test-host:1') {}

  claimant(): string {
    return this.self;
  }

  isAlive(claimant: string): boolean | 'unknown' {
    if (!claimant.startsWith('test-host:')) return 'unknown';
    return !this.dead.has(claimant);
  }
}
