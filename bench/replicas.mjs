// 1,000 jobs (BENCH_JOBS) due at the same instant, an agent that answers at once (`/bin/echo done`), and
// `cron.max_parallel_jobs: 32`: on PostgreSQL with three gateway replicas (BENCH_REPLICAS) sharing
// one scratch database, then on the file store with one gateway. Lateness is the time from the
// jobs' due time to each gateway's `running job` log line (JSON logs, millisecond timestamps);
// prints the median, p99 and maximum, the runs per replica, and jobs that started more than once
// or never. Target on PostgreSQL: every job started within 5 s of its due time, each exactly once.
// About 40 s.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT, GATEWAY_NODE_OPTIONS, kill } from './gatewayBench.mjs';
import { scratchJobDatabase } from './postgresBench.mjs';

const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 3);
/** How long after the gateways are up the jobs fall due. */
const LEAD_MS = 4000;

const work = mkdtempSync(join(tmpdir(), 'agent-bench-replicas-'));

/** `count` one-shot jobs due at `dueAt`, as jobs.json holds them. */
function dueJobs(count, dueAt) {
  const at = new Date(dueAt).toISOString();
  return Array.from({ length: count }, (_, i) => ({
    id: `b${i.toString(16).padStart(11, '0')}`,
    name: `due ${i}`,
    prompt: `Say done ${i}`,
    schedule: { kind: 'once', expr: at, display: `once at ${at}`, run_at: at },
    skills: [],
    deliver: 'local',
    repeat: { times: 1, completed: 0 },
    state: 'scheduled',
    enabled: true,
    next_run_at: at,
    last_run_at: null,
    last_status: null,
    last_error: null,
    last_delivery_error: null,
    last_delivery_queued: null,
    created_at: new Date(dueAt - 60_000).toISOString(),
    model: null,
    provider: null,
    script: null,
    origin: null,
    paused_at: null,
  }));
}

/** A home whose agent answers at once; with `databaseUrl`, its jobs are in that database. */
function home(name, databaseUrl) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lines = [
    'timezone: UTC',
    'model:',
    '  provider: command',
    `  command: ${JSON.stringify(['/bin/echo', 'done'])}`,
    'cron:',
    '  max_parallel_jobs: 32',
  ];
  if (databaseUrl) lines.push('database:', `  url: ${databaseUrl}`);
  writeFileSync(join(dir, 'config.yaml'), `${lines.join('\n')}\n`);
  return dir;
}

/** Starts a gateway with JSON logs; `starts` gets the time of each job's `running job` line. */
function startGateway(dir, starts) {
  const gateway = spawn(process.execPath, [...GATEWAY_NODE_OPTIONS, AGENT, 'gateway', '--log-format', 'json'], {
    env: { ...process.env, AGENT_HOME: dir, AGENT_DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = new Promise((resolve, reject) => {
    const onLine = (line) => {
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.message === 'gateway started') resolve();
      if (typeof entry.message === 'string' && entry.message.startsWith('running job') && entry.job) {
        starts.push({ job: entry.job, at: Date.parse(entry.timestamp), pid: gateway.pid });
      }
    };
    createInterface({ input: gateway.stdout }).on('line', onLine);
    createInterface({ input: gateway.stderr }).on('line', onLine);
    gateway.once('exit', (code, signal) => reject(new Error(`a gateway exited (${code ?? signal}) before it started`)));
  });
  return { gateway, ready };
}

async function round(label, replicas, setUp) {
  const starts = [];
  const dirs = Array.from({ length: replicas }, (_, n) => `${label}-${n}`);
  const dueAt = Date.now() + 60_000;
  const prepared = await setUp(dueJobs(JOBS, dueAt), dirs);
  if (!prepared) return;
  const { databaseUrl, cleanup } = prepared;
  const gateways = dirs.map((name) => startGateway(join(work, name), starts));
  try {
    await Promise.all(gateways.map((g) => g.ready));
    // Every gateway up: the jobs fall due LEAD_MS from now (moved in the store, so that none ran yet).
    const due = Date.now() + LEAD_MS;
    await setUp.moveDue(databaseUrl, dirs, due);
    const deadline = due + 30_000;
    while (new Set(starts.map((s) => s.job)).size < JOBS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 1500)); // late doubles would show up here
    const lateness = starts.map((s) => s.at - due).sort((a, b) => a - b);
    const seen = new Map();
    for (const s of starts) seen.set(s.job, (seen.get(s.job) ?? 0) + 1);
    const doubled = [...seen.values()].filter((n) => n > 1).length;
    const never = JOBS - seen.size;
    const per = gateways.map((g) => starts.filter((s) => s.pid === g.gateway.pid).length);
    const pick = (q) => lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))] ?? NaN;
    const within5 = lateness.filter((ms) => ms <= 5000).length;
    console.log(
      `  ${label.padEnd(10)} ${String(replicas)} gateway(s)  lateness median ${pick(0.5)} ms  p99 ${pick(0.99)} ms  max ${lateness.at(-1)} ms  ` +
        `within 5 s ${within5}/${JOBS}  runs per gateway ${per.join('/')}  doubled ${doubled}  never ${never}`,
    );
  } finally {
    await Promise.all(gateways.map((g) => kill(g.gateway, process.env.BENCH_CPU_PROFILE ? 'SIGTERM' : 'SIGKILL')));
    await cleanup();
  }
}

console.log(`${JOBS} one-shot jobs due at one instant, agent answers at once, cron.max_parallel_jobs: 32`);
try {
  const postgres = async (jobs, dirs) => {
    const database = await scratchJobDatabase(jobs);
    if (!database) return null;
    for (const dir of dirs) home(dir, database.url);
    return { databaseUrl: database.url, cleanup: database.drop };
  };
  postgres.moveDue = async (url, _dirs, due) => {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    const at = new Date(due).toISOString();
    await client.query(
      `UPDATE agent_jobs SET next_run_at = $1::timestamptz,
         record = jsonb_set(jsonb_set(jsonb_set(record, '{next_run_at}', to_jsonb($2::text)), '{schedule,run_at}', to_jsonb($2::text)), '{schedule,expr}', to_jsonb($2::text))`,
      [at, at],
    );
    await client.query('NOTIFY agent_jobs_changed');
    await client.end();
  };
  await round('postgres', REPLICAS, postgres);

  const files = async (jobs, dirs) => {
    home(dirs[0], null);
    mkdirSync(join(work, dirs[0], 'cron'), { recursive: true, mode: 0o700 });
    writeFileSync(join(work, dirs[0], 'cron', 'jobs.json'), JSON.stringify({ jobs, updated_at: new Date().toISOString() }, null, 2), {
      mode: 0o600,
    });
    return { databaseUrl: null, cleanup: async () => undefined };
  };
  files.moveDue = async (_url, dirs, due) => {
    const at = new Date(due).toISOString();
    const jobs = dueJobs(JOBS, due).map((job) => ({ ...job, next_run_at: at }));
    const file = join(work, dirs[0], 'cron', 'jobs.json');
    // Written whole and renamed into place, as the store itself writes it.
    writeFileSync(`${file}.bench`, JSON.stringify({ jobs, updated_at: new Date().toISOString() }, null, 2), { mode: 0o600 });
    (await import('node:fs')).renameSync(`${file}.bench`, file);
  };
  await round('files', 1, files);
} finally {
  rmSync(work, { recursive: true, force: true });
}
