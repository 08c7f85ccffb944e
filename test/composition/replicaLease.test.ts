import type { LeaseRenewal, Replica, ReplicaLeases } from '../../src/application/ports/ReplicaLeases.js';
import { holdReplicaLease } from '../../src/composition/gateway/replicaLease.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { eventually } from '../support/processLiveness.js';

const registration = { host: 'host-a', pid: 1, startedAt: '2026-06-01T07:00:00Z', listener: null, provider: 'built-in ticker' };

/** Leases whose renewals answer, in turn, what `answers` says (then 'held'), counting the tries. */
class ScriptedLeases implements ReplicaLeases {
  tries = 0;
  constructor(private readonly answers: Array<LeaseRenewal['state'] | Error>) {}
  async renew(_replica: Replica, _leaseMs: number): Promise<LeaseRenewal> {
    this.tries += 1;
    const answer = this.tries === 1 ? 'taken' : (this.answers[this.tries - 2] ?? 'held');
    if (answer instanceof Error) throw answer;
    return { epoch: answer === 'lost' ? 2 : 1, state: answer };
  }
  async release(): Promise<void> {}
  async live(): Promise<Replica[]> {
    return [];
  }
  async lapsed(): Promise<Set<string>> {
    return new Set();
  }
}

describe('the gateway lease on a shared store', () => {
  it('tries a failed renewal again every second, not every third of the lease, and logs the failure once and its end once', async () => {
    const down = new Error('Cannot use the database db:5432/agent: nothing listens there');
    const leases = new ScriptedLeases([down, down, down, 'resumed']);
    const log = new RecordingLogger();
    // A lease of 30 s: renewed every 10 s while it works, every second once a renewal failed.
    const held = await holdReplicaLease(leases, registration, 30_000, log);
    try {
      // The first renewal fails 10 s after the start; the three tries after it come within a
      // few seconds of it (every 10 s, they would take 30 s more).
      expect(await eventually(() => leases.tries >= 5, 35_000)).toBe(true);
      const lines = log.entries.map((entry) => `${entry.level} ${entry.message}`);
      expect(
        lines.filter((line) =>
          line.startsWith('error the gateway lease could not be renewed; this gateway starts no run until it is renewed'),
        ),
      ).toHaveLength(1);
      expect(lines).toContain('info the gateway lease is renewed again; it had lapsed, but no other gateway took over its runs');
    } finally {
      await held.release();
    }
  });

  it('says, once back, that other gateways took over its runs when its term moved on', async () => {
    const leases = new ScriptedLeases([new Error('connection terminated'), 'lost']);
    const log = new RecordingLogger();
    const held = await holdReplicaLease(leases, registration, 3_000, log);
    try {
      expect(await eventually(() => leases.tries >= 3, 30_000)).toBe(true);
      expect(log.entries.filter((entry) => entry.level === 'warn').map((entry) => entry.message)).toEqual([
        'the gateway lease had lapsed and other gateways took over the runs it held; what those runs finish here is not recorded as done (the other gateways run them), and this gateway holds a new lease now',
      ]);
    } finally {
      await held.release();
    }
  });
});
