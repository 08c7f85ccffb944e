// One tick over 1,000 / 10,000 / 100,000 jobs with none due: time and peak memory, on the file
// store and, when the PostgreSQL server of BENCH_POSTGRES_URL (default the local one) answers, on
// a scratch database holding the same jobs. Targets: 10,000 jobs under 100 ms on files; 100,000
// under 20 ms on PostgreSQL. Each size runs in a fresh process: the first tick is cold (includes
// JIT warm-up), the median is over the following ticks in the same process.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleBenchEntry } from './bundleEntry.mjs';
import { jobStoreText } from './jobStore.mjs';
import { scratchJobDatabase } from './postgresBench.mjs';

const SIZES = (process.env.BENCH_TICK_SIZES ?? '1000,10000,100000').split(',').map(Number);
const RUNS = 6;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const work = mkdtempSync(join(tmpdir(), 'agent-tick-bench-'));
try {
  const entry = join(work, 'tickBench.mjs');
  await bundleBenchEntry('tickBench', entry);
  console.log('tick over N jobs, none due (fresh process per size)');
  for (const size of SIZES) {
    const home = join(work, `home-${size}`);
    mkdirSync(join(home, 'cron'), { recursive: true, mode: 0o700 });
    const text = jobStoreText(size);
    writeFileSync(join(home, 'cron', 'jobs.json'), text, { mode: 0o600 });
    const tick = (env) => {
      const result = spawnSync(process.execPath, [entry, home, String(RUNS)], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
        env: { ...process.env, ...env },
      });
      if (result.status !== 0) throw new Error(`bench process failed: ${result.stderr}`);
      return JSON.parse(result.stdout);
    };
    const line = (store, { times, peakRssMb }, target) => {
      const [first, ...rest] = times;
      console.log(
        `  ${String(size).padStart(7)} jobs  ${store.padEnd(10)}  first ${first.toFixed(1).padStart(7)} ms  ` +
          `median ${median(rest).toFixed(1).padStart(7)} ms  peak RSS ${peakRssMb.toFixed(0).padStart(4)} MB${target}`,
      );
    };
    const sizeMb = (Buffer.byteLength(text) / 2 ** 20).toFixed(1);
    line(`files`, tick({}), size === 10000 ? `   (${sizeMb} MB jobs.json; target < 100 ms)` : `   (${sizeMb} MB jobs.json)`);
    const database = await scratchJobDatabase(JSON.parse(text).jobs);
    if (!database) continue;
    try {
      line('postgres', tick({ AGENT_DATABASE_URL: database.url }), size === 100000 ? '   (target < 20 ms)' : '');
    } finally {
      await database.drop();
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
