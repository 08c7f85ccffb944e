// The container image (Dockerfile): its size, and the gateway's start-up time in a container, from
// `docker run` to the first 200 from GET /health on the published port (the listener turned on by
// a mounted config.yaml). Median, fastest and slowest of BENCH_RUNS starts (default 5).
// Where no Docker daemon answers it prints why and exits 0: a figure for the note, not a test.
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const IMAGE = process.env.BENCH_IMAGE ?? 'agent-gateway:bench';
const BASE_IMAGE = 'node:20-bookworm-slim';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

const docker = async (...args) => (await run('docker', args, { maxBuffer: 64 * 1024 * 1024 })).stdout.trim();
const megabytes = (bytes) => `${(Number(bytes) / 1e6).toFixed(1)} MB`;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function dockerUnavailable() {
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 30_000 });
  if (info.error) return `the docker CLI cannot be run (${info.error.code ?? info.error.message})`;
  if (info.status !== 0)
    return `no Docker daemon answers (${info.stderr.trim().split('\n')[0] || `docker info exited with ${info.status}`})`;
  return null;
}

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Milliseconds from `docker run` until /health answers 200 (polled every 10 ms, 60 s at most). */
async function startUpMs(configFile, name) {
  const port = await freePort();
  const start = performance.now();
  await docker(
    'run',
    '--detach',
    '--name',
    name,
    '--publish',
    `127.0.0.1:${port}:8644`,
    '--volume',
    `${configFile}:/data/config.yaml:ro`,
    IMAGE,
  );
  for (;;) {
    const answered = await fetch(`http://127.0.0.1:${port}/health`).then(
      (response) => response.ok,
      () => false,
    );
    const elapsed = performance.now() - start;
    if (answered) return elapsed;
    if (elapsed > 60_000) throw new Error(`${name} did not answer /health within 60 s:\n${await docker('logs', name)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const unavailable = dockerUnavailable();
if (unavailable) {
  console.log(`docker not available: ${unavailable}`);
  process.exit(0);
}

const buildStart = performance.now();
await docker('build', '--tag', IMAGE, ROOT);
const buildMs = performance.now() - buildStart;
const size = await docker('image', 'inspect', '--format', '{{.Size}}', IMAGE);
const baseSize = await docker('image', 'inspect', '--format', '{{.Size}}', BASE_IMAGE).catch(() => null);

const dir = mkdtempSync(join(tmpdir(), 'agent-bench-container-'));
const configFile = join(dir, 'config.yaml');
writeFileSync(configFile, 'platforms:\n  webhook:\n    enabled: true\n', { mode: 0o644 });
const times = [];
try {
  for (let i = 0; i < RUNS; i += 1) {
    const name = `agent-bench-${process.pid}-${i}`;
    try {
      times.push(await startUpMs(configFile, name));
    } finally {
      await docker('rm', '--force', '--volumes', name).catch(() => undefined);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log('container image');
console.log(
  `  image ${IMAGE}              ${megabytes(size)}${baseSize ? `   (${BASE_IMAGE}: ${megabytes(baseSize)}, so ${megabytes(size - baseSize)} added)` : ''}`,
);
console.log(`  docker build                     ${(buildMs / 1000).toFixed(1)} s   (with whatever the build cache held)`);
console.log(
  `  docker run to /health 200        median ${median(times).toFixed(0)} ms, fastest ${Math.min(...times).toFixed(0)} ms, slowest ${Math.max(...times).toFixed(0)} ms   (${RUNS} starts)`,
);
