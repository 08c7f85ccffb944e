// Times PosixProcessTreeKiller.killTree over real trees of N processes, as the service wires it.
// Run by bench/tree-kill.mjs, which bundles this file; argv: <work dir> <runs> <proc|ps> <size>...
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PosixProcessTreeKiller } from '../src/adapters/process/PosixProcessTreeKiller.js';
import { ProcStatListing, PsTreeListing, readProcEntry } from '../src/adapters/process/processTable.js';

const [workDir, runsText, listing, ...sizeTexts] = process.argv.slice(2);
const runs = Number(runsText);
const killer = new PosixProcessTreeKiller({ listing: listing === 'ps' ? new PsTreeListing() : new ProcStatListing() });

/**
 * A root shell with two-process branches (a shell and its sleep) and, for an even size, one
 * more sleep: depth two, every member recorded in $PIDS. The root ends as `sleep` itself.
 */
function treeScript(size: number): string {
  const branches = Math.floor((size - 1) / 2);
  const lines = ['echo $$ >> "$PIDS"'];
  for (let i = 0; i < branches; i += 1) lines.push(`sh -c 'echo $$ >> "$PIDS"; sleep 300 & echo $! >> "$PIDS"; wait' &`);
  if ((size - 1) % 2 === 1) lines.push('sleep 300 &', 'echo $! >> "$PIDS"');
  lines.push('exec sleep 300');
  return lines.join('\n');
}

const alive = (pid: number) => {
  const entry = readProcEntry(pid);
  return entry !== null && entry.state !== 'Z' && entry.state !== 'X';
};

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function once(size: number): Promise<{ killMs: number; goneMs: number }> {
  const pidsFile = join(workDir!, `pids-${size}`);
  writeFileSync(pidsFile, '');
  const recorded = () => readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
  const root = spawn('/bin/sh', ['-c', treeScript(size)], { detached: true, stdio: 'ignore', env: { ...process.env, PIDS: pidsFile } });
  await until(() => recorded().length >= size && recorded().every(alive), `${size} processes to start`);
  const pids = recorded();

  const start = performance.now();
  const report = await killer.killTree(root.pid!);
  const killMs = performance.now() - start;
  await until(() => !pids.some(alive), 'the tree to be gone');
  const goneMs = performance.now() - start;
  if (report.survivors.length > 0 || report.fallback) throw new Error(`unexpected report ${JSON.stringify(report)}`);
  return { killMs, goneMs };
}

const results: Record<string, { killMs: number[]; goneMs: number[] }> = {};
for (const size of sizeTexts.map(Number)) {
  results[size] = { killMs: [], goneMs: [] };
  for (let i = 0; i < runs; i += 1) {
    const { killMs, goneMs } = await once(size);
    results[size].killMs.push(killMs);
    results[size].goneMs.push(goneMs);
  }
}
process.stdout.write(JSON.stringify(results));
