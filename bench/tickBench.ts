// One process, one store of N jobs (none due): times RunDueJobs.execute() as the CLI wires it.
// Run by bench/tick.mjs, which bundles this file; argv: <AGENT_HOME> <runs>.
import { RunDueJobs } from '../src/application/cron/RunDueJobs.js';
import { ConsoleLogger } from '../src/adapters/logging/ConsoleLogger.js';
import { agentPathsFor } from '../src/adapters/persistence/agentPaths.js';
import { buildApplicationContainer } from '../src/composition/applicationContainer.js';

const [home, runsText] = process.argv.slice(2);
const runs = Number(runsText ?? 5);
const { container } = await buildApplicationContainer(agentPathsFor(home!), { ...process.env, AGENT_TIMEZONE: 'UTC' }, new ConsoleLogger(process.stderr));
const tick = container.get(RunDueJobs);

const times: number[] = [];
for (let i = 0; i < runs; i += 1) {
  const start = process.hrtime.bigint();
  const report = await tick.execute();
  times.push(Number(process.hrtime.bigint() - start) / 1e6);
  if (report.ran.length > 0 || report.lockBusy) throw new Error('the bench store was expected to have nothing due');
}
const peakRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(JSON.stringify({ times, peakRssMb, heapUsedMb: process.memoryUsage().heapUsed / 2 ** 20 }));
