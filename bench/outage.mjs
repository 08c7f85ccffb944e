// The database-outage experiment (docs/adr/0014-no-run-twice-after-an-outage.md): for outages of
// 10, 36 and 90 s, each with the default lease and with `database.lease_seconds: 6`, two built
// gateways on one scratch database take 4 signed webhook events a second (alternately), the
// database is made unreachable for the outage and then reachable again (bench/outageExperiment.mjs
// says how), and every run of every event is counted. Prints per case: events accepted, run once,
// run twice or more, lost (accepted and never run to its end), the seconds from the database's
// return until the backlog it held back (every event sent before the return) had run, and from the
// last accept (the sending goes on for 10 s after the return) until every accepted event had run. Target: 0 twice, 0 lost in every case. About 12 minutes.
// BENCH_OUTAGE_CASES=10:6,36:default picks cases (outage seconds : lease seconds); BENCH_KEEP=1
// keeps each case's directory (the gateways' logs, the runs file) and says where.
import { runOutageCase } from './outageExperiment.mjs';

const cases = (process.env.BENCH_OUTAGE_CASES ?? '10:default,10:6,36:default,36:6,90:default,90:6').split(',').map((text) => {
  const [outage, lease] = text.split(':');
  return { outageSeconds: Number(outage), leaseSeconds: lease === 'default' || lease === undefined ? null : Number(lease) };
});

const rows = [];
let failed = false;
for (const one of cases) {
  console.log(`outage ${one.outageSeconds} s, lease ${one.leaseSeconds ?? 'default (30)'} s`);
  const result = await runOutageCase({ ...one, keepWork: process.env.BENCH_KEEP === '1', log: (line) => console.log(line) });
  const bad = result.ranTwice > 0 || result.lost > 0 || result.notAccepted > 0 || result.stillWaiting > 0 || !result.gatewaysAlive;
  failed ||= bad;
  console.log(
    `  accepted ${result.accepted} of ${result.sent}, ran once ${result.ranOnce}, ran twice ${result.ranTwice}${result.ranTwice ? ` (${result.ranTwiceEvents.join(' ')})` : ''}, lost ${result.lost}${result.lost ? ` (${result.lostEvents.join(' ')})` : ''}, the backlog held back ran ${result.backlogSeconds ?? 'never'} s after the return, every accepted event ${result.drainSeconds ?? 'never'} s after it (${result.drainAfterLastAcceptSeconds ?? 'never'} s after the last accept); answers ${JSON.stringify(result.statuses)}${process.env.BENCH_KEEP === '1' ? `; kept in ${result.work}` : ''}`,
  );
  rows.push(result);
}
console.log(
  '\n| outage | lease | accepted | ran once | ran twice | lost | backlog ran, after the return | every accepted event ran, after the last accept |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows) {
  console.log(
    `| ${row.outageSeconds} s | ${row.leaseSeconds ?? 30} s | ${row.accepted} | ${row.ranOnce} | ${row.ranTwice} | ${row.lost} | ${row.backlogSeconds === null ? 'never' : `${row.backlogSeconds.toFixed(1)} s`} | ${row.drainAfterLastAcceptSeconds === null ? 'never' : `${row.drainAfterLastAcceptSeconds.toFixed(1)} s`} |`,
  );
}
if (failed) process.exitCode = 1;
