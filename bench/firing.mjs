// Firing lateness of `agent gateway` behind a long run: a recurring job whose run takes 30 s is
// due at start; 12 one-shots fall due over the next 40 s, 8 written before the gateway starts and
// 4 created by `agent cron create` in another process while it runs. Lateness is the time from a
// job's `next_run_at` to the gateway's "running job" log line (millisecond timestamps). Prints the
// maximum and the median over the 12; the target is every job within 1 s. Takes about 45 s.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const agent = new URL('../dist/agent.js', import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), 'agent-bench-firing-'));
const env = { ...process.env, AGENT_HOME: home, NO_COLOR: '1' };
for (const name of Object.keys(env)) if (name.startsWith('AGENT_') && name !== 'AGENT_HOME') delete env[name];
delete env.NODE_OPTIONS;

// The model: answers at once, or after N seconds for a prompt holding "[sleep N]".
writeFileSync(
  join(home, 'model.mjs'),
  `let input = '';
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  const sleep = /\\[sleep (\\d+)\\]/.exec(input);
  setTimeout(() => process.stdout.write('done\\n'), sleep ? Number(sleep[1]) * 1000 : 0);
});
`,
);
writeFileSync(
  join(home, 'config.yaml'),
  `timezone: UTC\nmodel:\n  provider: command\n  command: ${JSON.stringify([process.execPath, join(home, 'model.mjs')])}\n`,
);

const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const cli = (args) => {
  const run = spawnSync(process.execPath, [agent, ...args, '--no-tick'], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`agent ${args.join(' ')} failed: ${run.stderr}`);
  return /Created job (\w+)/.exec(run.stdout)[1];
};

const jobsFile = join(home, 'cron', 'jobs.json');
/** Sets due times in jobs.json before the gateway runs (one-shots of seconds cannot be written otherwise). */
function setDue(changes) {
  const store = JSON.parse(readFileSync(jobsFile, 'utf8'));
  for (const job of store.jobs) {
    const at = changes.get(job.id);
    if (at === undefined) continue;
    job.next_run_at = iso(at);
    if (job.schedule.kind === 'once') job.schedule.run_at = iso(at);
  }
  writeFileSync(`${jobsFile}.bench`, JSON.stringify(store, null, 2));
  renameSync(`${jobsFile}.bench`, jobsFile);
}

const start = Math.ceil((Date.now() + 8_000) / 1000) * 1000;
const due = new Map(); // name -> due time
const changes = new Map();
changes.set(cli(['cron', 'create', 'every 1h', 'long report [sleep 30]', '--name', 'long', '--deliver', 'local']), start);
const offsets = [3, 6, 9, 12, 16, 20, 24, 28, 31, 34, 37, 40].map((s) => s * 1000);
const lateCreated = new Set([1, 4, 7, 10]); // created while the gateway runs
for (const [index, offset] of offsets.entries()) {
  const name = `shot ${index}`;
  due.set(name, start + offset);
  if (!lateCreated.has(index))
    changes.set(cli(['cron', 'create', '10m', `one-shot ${index}`, '--name', name, '--deliver', 'local']), start + offset);
}
setDue(changes);

while (Date.now() < start - 1_000) await new Promise((resolve) => setTimeout(resolve, 50));
const gateway = spawn(process.execPath, [agent, 'gateway'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
let log = '';
gateway.stdout.setEncoding('utf8').on('data', (chunk) => (log += chunk));
// The others, created from another process while the long run goes on, each a few seconds ahead.
for (const index of lateCreated) {
  const at = due.get(`shot ${index}`);
  while (Date.now() < at - 2_500) await new Promise((resolve) => setTimeout(resolve, 50));
  cli(['cron', 'create', iso(at), `one-shot ${index}`, '--name', `shot ${index}`, '--deliver', 'local']);
}
const started = () => new Map([...log.matchAll(/^(\S+) info running job '(shot \d+)'/gm)].map((m) => [m[2], Date.parse(m[1])]));
const deadline = start + 50_000;
while (started().size < offsets.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
gateway.kill('SIGTERM');
await new Promise((resolve) => gateway.on('close', resolve));

const lateness = [...due].map(([name, at]) => (started().has(name) ? started().get(name) - at : Infinity)).sort((a, b) => a - b);
const ms = (value) => (Number.isFinite(value) ? `${value} ms` : 'never started');
console.log('firing lateness behind a 30 s run (12 one-shots over 40 s, 4 created while the gateway runs)');
console.log(`  median   ${ms(lateness[Math.floor(lateness.length / 2)])}`);
console.log(`  max      ${ms(lateness.at(-1))}   (target: every job within 1000 ms)`);
rmSync(home, { recursive: true, force: true });
