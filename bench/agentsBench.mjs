// What bench/agents.mjs uses besides its cases: the processes it starts (every one killed when the
// bench ends, fails or is interrupted), the fake model (fakeModel.mjs), what /proc says of a
// gateway, its /metrics, and the run ledger as the gateway leaves it, in files or in PostgreSQL.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AGENT, GATEWAY_NODE_OPTIONS, sleep } from './gatewayBench.mjs';

export const now = () => performance.timeOrigin + performance.now();

/** Every child process started; killed (SIGKILL) by {@link killAll}. */
const children = new Set();
/** What must be undone at the end whatever happens (scratch databases). */
const cleanups = [];

export function atCleanup(undo) {
  cleanups.push(undo);
  return () => cleanups.splice(cleanups.indexOf(undo), 1);
}

export function killAll() {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

export async function cleanUp() {
  killAll();
  for (const undo of cleanups.splice(0).reverse()) await undo().catch(() => undefined);
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    console.log(`\n${signal}: stopping every process the bench started`);
    void cleanUp().finally(() => process.exit(130));
  });
}
process.once('exit', killAll);

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Stops `child` with SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Starts bench/fakeModel.mjs with `env`; resolves once it listens. */
export async function startFakeModel(env) {
  const child = track(
    spawn(process.execPath, [new URL('./fakeModel.mjs', import.meta.url).pathname], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const port = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve(JSON.parse(line).port));
    child.once('exit', (code) => reject(new Error(`the fake model exited (${code}) before listening`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    child,
    port,
    baseUrl: `${base}/v1`,
    stats: async (requests = false) => (await fetch(`${base}/stats${requests ? '?requests=1' : ''}`)).json(),
  };
}

/**
 * Starts `agent gateway` as `npm start` does, on `home`, its output in `logFile` with the last
 * lines kept for when it dies; resolves once it printed `gateway started`.
 */
export function startGateway(home, logFile) {
  const child = track(
    spawn(process.execPath, [...GATEWAY_NODE_OPTIONS, AGENT, 'gateway'], {
      env: { ...process.env, AGENT_HOME: home, AGENT_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const log = createWriteStream(logFile, { flags: 'a' });
  const tail = [];
  let started;
  const gateway = { child, pid: child.pid, home, logFile, tail: () => tail.join('\n') };
  gateway.ready = new Promise((resolve) => {
    started = resolve;
  });
  const onLine = (line) => {
    log.write(`${line}\n`);
    tail.push(line.length > 400 ? `${line.slice(0, 400)}…` : line);
    if (tail.length > 40) tail.shift();
    if (line.includes('gateway started')) started(gateway);
  };
  createInterface({ input: child.stdout }).on('line', onLine);
  createInterface({ input: child.stderr }).on('line', onLine);
  gateway.died = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve(`${code ?? signal}`));
  });
  // A gateway that dies before it started fails the start with the end of its output.
  gateway.ready = Promise.race([
    gateway.ready,
    gateway.died.then((how) => {
      throw new Error(`a gateway exited (${how}) before it started; the end of its output:\n${gateway.tail()}`);
    }),
  ]);
  return gateway;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** RSS now and at its peak (bytes), and CPU seconds used (user + system), of process `pid`; null once it is gone. */
export function processFigures(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted from after the command name.
    const cpu = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM'), cpu };
  } catch {
    return null;
  }
}

/** Samples the RSS of `pids` every 200 ms until `stop()`; `peak` per pid. */
export function sampleRss(pids) {
  const peak = new Map(pids.map((pid) => [pid, 0]));
  const timer = setInterval(() => {
    for (const pid of pids) peak.set(pid, Math.max(peak.get(pid), processFigures(pid)?.rss ?? 0));
  }, 200);
  return { peak, stop: () => clearInterval(timer) };
}

/** The value of `name{labels}` in a Prometheus text exposition, or NaN. */
function sample(text, name, labels = '') {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || l.startsWith(`${name}${labels}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

/**
 * Scrapes `GET /metrics` of each of `ports` every 2 s until `stop()`: the highest p99 and maximum
 * of `agent_event_loop_delay_seconds` seen (its window is the last 30 to 60 s), and of prom-client's
 * `nodejs_eventloop_lag_p99_seconds`, which covers the time since the previous scrape (2 s).
 */
export function scrapeEventLoop(ports) {
  const seen = { p99: 0, max: 0, lagP99: 0, scrapes: 0 };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const port of ports) {
        const text = await fetch(`http://127.0.0.1:${port}/metrics`)
          .then((response) => response.text())
          .catch(() => '');
        if (!text) continue;
        seen.scrapes += 1;
        seen.p99 = Math.max(seen.p99, sample(text, 'agent_event_loop_delay_seconds', '{quantile="0.99"}') || 0);
        seen.max = Math.max(seen.max, sample(text, 'agent_event_loop_delay_seconds', '{quantile="1"}') || 0);
        seen.lagP99 = Math.max(seen.lagP99, sample(text, 'nodejs_eventloop_lag_p99_seconds') || 0);
      }
      await sleep(2000);
    }
  })();
  return {
    seen,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/**
 * The finished runs of the ledger in files, under `home/runs/<kind>/`: `poll` reads the files not
 * yet seen finished (status no longer `running`) and counts the finished records `counted` takes.
 */
export function fileLedger(homes, kind, counted = () => true) {
  const finished = new Map();
  return {
    poll() {
      for (const home of homes) {
        const root = join(home, 'runs', kind);
        if (!existsSync(root)) continue;
        for (const subject of readdirSync(root)) {
          if (subject.startsWith('.')) continue;
          const dir = join(root, subject);
          let names;
          try {
            names = readdirSync(dir);
          } catch {
            continue;
          }
          for (const name of names) {
            if (!name.endsWith('.json') || finished.has(`${dir}/${name}`)) continue;
            try {
              const record = JSON.parse(readFileSync(join(dir, name), 'utf8'));
              if (record.status !== 'running') finished.set(`${dir}/${name}`, record);
            } catch {
              // Being replaced right now: read at the next poll.
            }
          }
        }
      }
      return [...finished.values()].filter(counted).length;
    },
    records: () => [...finished.values()],
  };
}

/** The finished runs of `kind` in the ledger of the PostgreSQL database at `url`. */
export async function postgresLedger(url, kind) {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  let records = [];
  return {
    async poll() {
      const { rows } = await client.query(`SELECT record FROM agent_runs WHERE kind = $1 AND record->>'status' <> 'running'`, [kind]);
      records = rows.map((row) => row.record);
      return records.length;
    },
    records: () => records,
    close: () => client.end(),
  };
}

/** p (0 to 1) of sorted `values`, nearest rank; NaN when empty. */
export function quantile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** Prints `rows` (label, then one cell per column) as an aligned table under `header`. */
export function printTable(header, rows) {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => String(row[column] ?? '').length)));
  const format = (row) =>
    row.map((cell, column) => (column === 0 ? String(cell).padEnd(widths[0]) : String(cell ?? '').padStart(widths[column]))).join('  ');
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(format(row));
}
