// Time from the killTree call (a timeout firing) to every process of the tree gone, for trees of
// 1, 10 and 50 processes (BENCH_TREE_SIZES); median of BENCH_TREE_RUNS (default 7) runs each.
// Target: under 1 s for 50 processes. POSIX only: Windows uses taskkill.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleBenchEntry } from './bundleEntry.mjs';

const SIZES = (process.env.BENCH_TREE_SIZES ?? '1,10,50').split(',').map(Number);
const RUNS = Number(process.env.BENCH_TREE_RUNS ?? 7);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

if (process.platform === 'win32') {
  console.log('process-tree kill: skipped on Windows (taskkill /T /F)');
} else {
  const work = mkdtempSync(join(tmpdir(), 'agent-tree-kill-bench-'));
  try {
    const entry = join(work, 'treeKillBench.mjs');
    await bundleBenchEntry('treeKillBench', entry);
    for (const [listing, label] of [
      ['proc', '/proc'],
      ['ps', 'ps-tree, the listing of systems without /proc'],
    ]) {
      const result = spawnSync(process.execPath, [entry, work, String(RUNS), listing, ...SIZES.map(String)], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (result.status !== 0) throw new Error(`bench process failed: ${result.stderr}`);
      const results = JSON.parse(result.stdout);
      console.log(`process-tree kill through ${label}: killTree call → whole tree gone (median of ${RUNS} runs)`);
      for (const size of SIZES) {
        const { killMs, goneMs } = results[size];
        console.log(
          `  ${String(size).padStart(3)} processes  killTree ${median(killMs).toFixed(1).padStart(6)} ms  ` +
            `gone ${median(goneMs).toFixed(1).padStart(6)} ms  (max ${Math.max(...goneMs).toFixed(1)} ms)` +
            (size === 50 ? '   (target < 1000 ms)' : ''),
        );
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
