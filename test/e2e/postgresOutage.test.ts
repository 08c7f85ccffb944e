import { runOutageCase } from '../../bench/outageExperiment.mjs';
import { spawn } from '../support/testProcesses.js';
import { requireBuiltAgent } from './agentCli.js';

/**
 * The database-outage experiment of bench/outage.mjs, one short case: two built gateways on one
 * scratch database, 4 signed webhook events a second sent to them alternately (and again, as a
 * code host retries, after each 503), the database made unreachable for 15 s (ALLOW_CONNECTIONS
 * false, every session of it terminated) with `database.lease_seconds: 6`, then reachable again.
 * Every accepted event runs exactly once: none twice, none lost.
 */
describe('gateway replicas when their database is away for longer than a lease', () => {
  beforeAll(() => requireBuiltAgent());

  it('run every accepted webhook event exactly once, and keep running', async () => {
    const result = await runOutageCase({ outageSeconds: 15, leaseSeconds: 6, beforeSeconds: 5, afterSeconds: 5, spawn });
    const summary = { ...result, logs: undefined };
    if (result.ranTwice > 0 || result.lost > 0 || result.notAccepted > 0)
      console.log(JSON.stringify(summary), '\n', Object.values(result.logs).join('\n=====\n'));
    // Some events were refused while it was away, and sent again.
    expect(result.statuses['503']).toBeGreaterThan(0);
    expect(result.accepted).toBe(result.sent);
    expect(result.ranTwiceEvents).toEqual([]);
    expect(result.lostEvents).toEqual([]);
    expect(result.ranOnce).toBe(result.accepted);
    expect(result.stillWaiting).toBe(0);
    expect(result.gatewaysAlive).toBe(true);
    // Each gateway said once that its lease could not be renewed, and once that it is renewed again.
    for (const output of Object.values(result.logs)) {
      expect(output.split('the gateway lease could not be renewed').length - 1).toBe(1);
      expect(output).toMatch(/the gateway lease is renewed again/);
    }
  }, 150_000);
});
