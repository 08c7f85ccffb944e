// npm run bench:fire — the managed trigger's fire endpoint, through the built `agent gateway`
// (cron.provider managed, webhooks off) and a small portal on loopback that serves a JWKS of an
// RSA key made here, mints RS256 fire tokens and keeps the armed fires (provision, cancel, list),
// as the real one does. Two figures:
//
// 1. fire-to-run-start latency: BENCH_LATENCY_FIRES (default 100) fires, one at a time, each of
//    its own job; from just before the POST to the gateway's `running job` log line (millisecond
//    timestamps, one clock); median and p99. The 202's round trip is printed beside it.
// 2. fires claimed per second: BENCH_FIRES (default 200) jobs fired all at once, every slot fired
//    twice (each with its own token), so 2 × N requests; claims per second from the first request
//    to the last answer, then the runs counted: every job must run exactly once (none lost, none
//    doubled) and exactly N fires must be answered 202.
//
// BENCH_STORES=files,postgres (the default) chooses the stores; BENCH_CPU_PROFILE=<directory>
// writes the gateway's CPU profile there.
//
// The client is what a portal is: keep-alive connections (node:http, Nagle off) and at most
// BENCH_CONCURRENCY (default 64) fires in flight at once, each sent as the previous one on its
// connection is answered; not one new connection per fire, nor every fire of the burst at once.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import { GATEWAY_NODE_OPTIONS } from './gatewayBench.mjs';
import { jobStoreText } from './jobStore.mjs';
import { scratchJobDatabase } from './postgresBench.mjs';

const LATENCY_FIRES = Number(process.env.BENCH_LATENCY_FIRES ?? 100);
const FIRES = Number(process.env.BENCH_FIRES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const AGENT = new URL('../dist/agent.js', import.meta.url).pathname;
const AUDIENCE = 'agent-gateway-bench';
const SCHEDULER_TOKEN = 'bench-scheduler-token';
/** How long the runs may stay without progress before the ones missing count as lost. */
const QUIET_MS = 15_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** The portal: JWKS, token minting, and the provider side keeping one armed fire per job. */
async function startPortal() {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'bench-1', alg: 'RS256', use: 'sig' }] });
  const armed = new Map();
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null;
    const answer = (status, json) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(typeof json === 'string' ? json : JSON.stringify(json));
    if (request.url === '/jwks.json') return answer(200, jwks);
    if (request.headers.authorization !== `Bearer ${SCHEDULER_TOKEN}`) return answer(401, { error: 'unauthorized' });
    if (request.url === '/api/agent-cron/provision') {
      const schedule_id = `schedule-${randomUUID()}`;
      armed.set(body.job_id, { job_id: body.job_id, fire_at: body.fire_at, schedule_id });
      return answer(200, { schedule_id });
    }
    if (request.url === '/api/agent-cron/cancel') {
      armed.delete(body.job_id);
      return answer(200, {});
    }
    if (request.url === '/api/agent-cron/list') return answer(200, { armed: [...armed.values()] });
    answer(404, { error: 'not found' });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  const mint = (jobId) => {
    const now = Math.floor(Date.now() / 1000);
    return jwt.sign(
      { iss: url, aud: AUDIENCE, purpose: 'cron_fire', job_id: jobId, iat: now, exp: now + 60, jti: randomUUID() },
      privateKey,
      {
        algorithm: 'RS256',
        keyid: 'bench-1',
      },
    );
  };
  return { url, mint, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The jobs of both figures, each recurring daily, its slot an hour ahead (the portal's clock decides). */
function writeJobs(home, count) {
  const store = JSON.parse(jobStoreText(count));
  for (const [index, job] of store.jobs.entries()) {
    Object.assign(job, {
      name: `bench ${index}`,
      prompt: `Bench JOB-${index}`,
      schedule: { kind: 'interval', expr: 'every 1d', display: 'every 1d', minutes: 1440 },
      skills: [],
      repeat: { times: null, completed: 0 },
      state: 'scheduled',
      enabled: true,
      last_status: null,
    });
  }
  mkdirSync(join(home, 'cron'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, 'cron', 'jobs.json'), JSON.stringify(store, null, 2), { mode: 0o600 });
  return { records: store.jobs, jobs: store.jobs.map((job) => ({ id: job.id, name: job.name, slot: job.next_run_at })) };
}

/** The portal's connections to the gateway: kept alive, at most CONCURRENCY of them. */
const connections = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, noDelay: true });

/** One fire: a POST of `{job_id, fire_at}` with the token; its status and parsed answer. */
function fire(base, job, token) {
  const body = JSON.stringify({ job_id: job.id, fire_at: job.slot });
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${base}/api/cron/fire`,
      {
        method: 'POST',
        agent: connections,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode, body: JSON.parse(text) }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Sends every request, at most CONCURRENCY in flight; the answers in the order of `requests`. */
async function fireAll(base, requests) {
  const answers = new Array(requests.length);
  let next = 0;
  const sender = async () => {
    while (next < requests.length) {
      const index = next++;
      const { job, token } = requests[index];
      answers[index] = await fire(base, job, token).catch((error) => ({ status: 0, body: { error: String(error) } }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, requests.length) }, sender));
  return answers;
}

async function stop(child) {
  if (child.exitCode !== null) return;
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  });
}

if (!existsSync(AGENT)) {
  console.log('dist/agent.js is missing: run `npm run build` first; no figures.');
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'agent-fire-bench-'));
const portal = await startPortal();
try {
  const stores = (process.env.BENCH_STORES ?? 'files,postgres').split(',');
  if (stores.includes('files')) await measure('file store (jobs.json)', join(work, 'files'), null);
  if (stores.includes('postgres')) await measure('PostgreSQL', join(work, 'postgres'), async (records) => scratchJobDatabase(records));
} finally {
  connections.destroy();
  await portal.close();
  rmSync(work, { recursive: true, force: true });
}

/** Both figures with the jobs in `jobs.json`, or in the database `database(records)` gives (skipped when null). */
async function measure(storeName, home, database) {
  let gateway = null;
  let scratch = null;
  try {
    const port = await freePort();
    const runsFile = join(home, 'runs.log');
    // Shell built-ins only: a run costs one process and records which job it was.
    const model = `while read -r line; do case $line in *JOB-*) n=\${line##*JOB-};; esac; done; echo "JOB-$n" >> ${runsFile}; echo done`;
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, 'config.yaml'),
      [
        'timezone: UTC',
        'model:',
        '  provider: command',
        `  command: ${JSON.stringify(['sh', '-c', model])}`,
        'cron:',
        '  provider: managed',
        '  max_parallel_jobs: 8',
        '  managed:',
        `    portal_url: ${portal.url}`,
        `    callback_url: http://127.0.0.1:${port}`,
        `    expected_audience: ${AUDIENCE}`,
        `    jwks_url: ${portal.url}/jwks.json`,
        'platforms:',
        '  webhook:',
        '    enabled: false',
        '    extra:',
        '      host: 127.0.0.1',
        `      port: ${port}`,
        '',
      ].join('\n'),
    );
    const { records, jobs } = writeJobs(home, LATENCY_FIRES + FIRES);
    if (database) {
      scratch = await database(records);
      if (!scratch) return;
    }
    const latencyJobs = jobs.slice(0, LATENCY_FIRES);
    const burstJobs = jobs.slice(LATENCY_FIRES);

    const env = { ...process.env, AGENT_HOME: home, NO_COLOR: '1', AGENT_CRON_SCHEDULER_TOKEN: SCHEDULER_TOKEN };
    for (const name of Object.keys(env))
      if (name.startsWith('AGENT_') && !['AGENT_HOME', 'AGENT_CRON_SCHEDULER_TOKEN'].includes(name)) delete env[name];
    if (scratch) env.AGENT_DATABASE_URL = scratch.url;
    console.log(`${storeName}:`);
    delete env.NODE_OPTIONS;
    gateway = spawn(process.execPath, [...GATEWAY_NODE_OPTIONS, AGENT, 'gateway'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let log = '';
    gateway.stdout.setEncoding('utf8').on('data', (chunk) => (log += chunk));
    const base = `http://127.0.0.1:${port}`;
    for (let waited = 0; !/gateway started/.test(log); waited += 20) {
      if (waited > 20_000 || gateway.exitCode !== null)
        throw new Error(`the gateway did not start (exit code ${gateway.exitCode}); its log:\n${log}`);
      await sleep(20);
    }
    // The first fire fetches the JWKS: warm it with a token the gateway refuses after fetching the keys.
    await fire(base, { id: 'warm-up', slot: jobs[0].slot }, portal.mint('another job'));

    // 1. Latency, one fire at a time.
    const runStart = (name) => {
      const match = new RegExp(`^(\\S+) info running job '${name}'`, 'm').exec(log);
      return match ? Date.parse(match[1]) : null;
    };
    const latencies = [];
    const roundTrips = [];
    for (const job of latencyJobs) {
      const token = portal.mint(job.id);
      const sentAt = Date.now();
      const before = performance.now();
      const answer = await fire(base, job, token);
      roundTrips.push(performance.now() - before);
      if (answer.status !== 202) throw new Error(`a fire of ${job.name} answered ${answer.status} ${JSON.stringify(answer.body)}`);
      let started = runStart(job.name);
      for (let waited = 0; started === null && waited < 10_000; waited += 2) {
        await sleep(2);
        started = runStart(job.name);
      }
      if (started === null) throw new Error(`the run of ${job.name} did not start within 10 s`);
      latencies.push(started - sentAt);
    }
    latencies.sort((a, b) => a - b);
    roundTrips.sort((a, b) => a - b);
    console.log(`fire to run start through POST /api/cron/fire (${LATENCY_FIRES} fires, one at a time, loopback)`);
    console.log(
      `  median ${percentile(latencies, 50)} ms   p99 ${percentile(latencies, 99)} ms   (the 202 itself: median ${percentile(roundTrips, 50).toFixed(1)} ms, p99 ${percentile(roundTrips, 99).toFixed(1)} ms)`,
    );

    // Let the latency runs finish so that the burst starts from an idle gateway.
    const ranLines = () => (existsSync(runsFile) ? readFileSync(runsFile, 'utf8').split('\n').filter(Boolean) : []);
    for (let waited = 0; ranLines().length < LATENCY_FIRES && waited < QUIET_MS; waited += 20) await sleep(20);
    const ranBefore = ranLines().length;

    // 2. Every slot of N jobs fired twice, all at once.
    const requests = burstJobs.flatMap((job) => [job, job].map((same) => ({ job: same, token: portal.mint(same.id) })));
    const started = performance.now();
    const answers = await fireAll(base, requests);
    const seconds = (performance.now() - started) / 1000;
    const accepted = answers.filter((answer) => answer.status === 202).length;
    const stale = answers.filter((answer) => answer.status === 200 && answer.body.status === 'stale').length;
    const other = answers.length - accepted - stale;

    let seen = -1;
    let lastProgress = performance.now();
    for (;;) {
      const count = ranLines().length - ranBefore;
      if (count !== seen) [seen, lastProgress] = [count, performance.now()];
      if (count >= FIRES || performance.now() - lastProgress > QUIET_MS) break;
      await sleep(20);
    }
    const ran = new Map();
    for (const line of ranLines().slice(ranBefore)) ran.set(line, (ran.get(line) ?? 0) + 1);
    const lost = burstJobs.filter((_, index) => !ran.has(`JOB-${LATENCY_FIRES + index}`)).length;
    const doubled = [...ran.values()].reduce((sum, times) => sum + Math.max(0, times - 1), 0);
    console.log(
      `fires claimed per second (${FIRES} jobs due, each slot fired twice at once: ${requests.length} requests, ${CONCURRENCY} in flight)`,
    );
    console.log(
      `  ${(accepted / seconds).toFixed(0)} claims/s (${(requests.length / seconds).toFixed(0)} answers/s)   202 ${accepted}   stale ${stale}   other ${other}` +
        `   runs ${ran.size}   lost ${lost}   doubled ${doubled}   (target: ${FIRES} × 202, none lost, none doubled)`,
    );
  } finally {
    if (gateway) await stop(gateway);
    await scratch?.drop();
  }
}
