// `agent cron list` with 100 jobs against `node -e 0`, run side by side, medians of N runs.
// Target: at most 2.5x the time of `node -e 0`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { jobStoreText } from './jobStore.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const agent = new URL('../dist/agent.js', import.meta.url).pathname;

function time(command, args, env) {
  const start = performance.now();
  const result = spawnSync(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const elapsed = performance.now() - start;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
  return elapsed;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const home = mkdtempSync(join(tmpdir(), 'agent-bench-'));
try {
  mkdirSync(join(home, 'cron'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, 'cron', 'jobs.json'), jobStoreText(100), { mode: 0o600 });
  // A typical config, so that reading and validating it is part of the figure.
  writeFileSync(
    join(home, 'config.yaml'),
    'timezone: Europe/Berlin\nmodel:\n  provider: command\n  command: ["my-agent", "--quiet"]\ncron:\n  max_parallel_jobs: 4\n',
  );
  const env = { ...process.env, AGENT_HOME: home, NO_COLOR: '1' };
  const baseline = [];
  const list = [];
  // Warms the file cache, and writes the code cache of the vendored packages where it is missing,
  // as any first command does (scripts/vendorLoader.mjs): what is measured is every later start.
  time(process.execPath, [agent, 'cron', 'list'], env);
  for (let i = 0; i < RUNS; i += 1) {
    baseline.push(time(process.execPath, ['-e', '0'], env));
    list.push(time(process.execPath, [agent, 'cron', 'list'], env));
  }
  const b = median(baseline);
  const l = median(list);
  console.log(`cli start-up (median of ${RUNS}, interleaved)`);
  console.log(`  node -e 0                    ${b.toFixed(1)} ms`);
  console.log(`  agent cron list (100 jobs)   ${l.toFixed(1)} ms   = ${(l / b).toFixed(2)}x   (target <= 2.50x)`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
