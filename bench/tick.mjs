// One tick over 1,000 / 10,000 / 100,000 jobs with none due: time and peak memory.
// Target (issue 2): 10,000 jobs under 100 ms. Each size runs in a fresh process: the first tick
// is cold (includes JIT warm-up), the median is over the following ticks in the same process.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const SIZES = (process.env.BENCH_TICK_SIZES ?? '1000,10000,100000').split(',').map(Number);
const RUNS = 6;
const root = new URL('..', import.meta.url).pathname;

const SCHEDULES = [
  { kind: 'interval', expr: 'every 1d', display: 'every 1d', minutes: 1440 },
  { kind: 'cron', expr: '0 9 * * 1-5', display: '0 9 * * 1-5' },
  { kind: 'cron', expr: '*/15 * * * *', display: '*/15 * * * *' },
];

function store(count) {
  const now = Date.now();
  const jobs = Array.from({ length: count }, (_, i) => ({
    id: i.toString(16).padStart(12, '0'),
    name: `job ${i}`,
    prompt: `Prompt number ${i}: summarise the state of project ${i} and report anything unusual.`,
    schedule: SCHEDULES[i % SCHEDULES.length],
    skills: i % 2 ? ['triage'] : [],
    deliver: 'local',
    repeat: { times: null, completed: i % 7 },
    state: i % 10 === 0 ? 'paused' : 'scheduled',
    enabled: i % 10 !== 0,
    next_run_at: new Date(now + 3_600_000 + i * 1000).toISOString(),
    last_run_at: null,
    last_status: i % 3 ? 'ok' : null,
    last_error: null,
    last_delivery_error: null,
    last_delivery_queued: null,
    created_at: new Date(now).toISOString(),
    model: null,
    provider: null,
    script: null,
    origin: null,
    paused_at: null,
    claim: null,
  }));
  return JSON.stringify({ jobs, updated_at: new Date(now).toISOString() }, null, 2);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const work = mkdtempSync(join(tmpdir(), 'agent-tick-bench-'));
try {
  const entry = join(work, 'tickBench.mjs');
  await build({
    entryPoints: [join(root, 'bench/tickBench.ts')],
    outfile: entry,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'warning',
  });
  console.log('tick over N jobs, none due (fresh process per size)');
  for (const size of SIZES) {
    const home = join(work, `home-${size}`);
    mkdirSync(join(home, 'cron'), { recursive: true, mode: 0o700 });
    const text = store(size);
    writeFileSync(join(home, 'cron', 'jobs.json'), text, { mode: 0o600 });
    const result = spawnSync(process.execPath, [entry, home, String(RUNS)], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (result.status !== 0) throw new Error(`bench process failed: ${result.stderr}`);
    const { times, peakRssMb } = JSON.parse(result.stdout);
    const [first, ...rest] = times;
    const size_mb = (Buffer.byteLength(text) / 2 ** 20).toFixed(1);
    console.log(
      `  ${String(size).padStart(7)} jobs (${size_mb.padStart(5)} MB)  first ${first.toFixed(1).padStart(7)} ms  ` +
        `median ${median(rest).toFixed(1).padStart(7)} ms  peak RSS ${peakRssMb.toFixed(0).padStart(4)} MB` +
        (size === 10000 ? `   (target < 100 ms)` : ''),
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
