// npm run bench:agents — the real path of agent runs under load: the built `agent gateway` (run as
// `npm start` runs it) with an `openai` provider pointed at a fake model (fakeModel.mjs, a process
// of its own) whose answers stream for BENCH_MODEL_MS (default 30 s) in BENCH_CHUNKS chunks
// (default 300), every run in flight at once. Cases (BENCH_CASES, comma-separated, default all):
//   webhook     BENCH_N (1000) signed webhook events posted 64 at a time (BENCH_CONNECTIONS),
//               max_concurrent_runs N; a few probe posts to a deliver_only route while they stream;
//   cron-files  N one-shot jobs due at one instant, max_parallel_jobs N, on the file store;
//   cron-pg1    the same on a scratch PostgreSQL database (BENCH_POSTGRES_URL), one gateway;
//   cron-pg3    the same with three gateway replicas on that database;
//   overload    BENCH_OVERLOAD_N (5000) webhook events against a model that takes 2 s
//               (BENCH_OVERLOAD_MODEL_MS) and serves at most 100 at once (BENCH_OVERLOAD_LIMIT),
//               429 with Retry-After: 1 beyond.
// `cron` names the three cron cases. BENCH_TOOL=1 makes each run's first turn call web_extract on
// a page this bench serves (BENCH_TOOL_MS, default 1 s, for that turn). Figures, never asserted;
// see bench/README.md. Every process it starts is killed when it ends, fails or is interrupted.
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT, freePort, sleep } from './gatewayBench.mjs';
import {
  atCleanup,
  cleanUp,
  fileLedger,
  now,
  postgresLedger,
  printTable,
  processFigures,
  quantile,
  sampleRss,
  scrapeEventLoop,
  startFakeModel,
  startGateway,
  stop,
} from './agentsBench.mjs';
import { scratchJobDatabase } from './postgresBench.mjs';

const N = Number(process.env.BENCH_N ?? 1000);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 30_000);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 300);
const TOOL = process.env.BENCH_TOOL === '1';
const TOOL_MS = Number(process.env.BENCH_TOOL_MS ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const OVERLOAD_N = Number(process.env.BENCH_OVERLOAD_N ?? 5000);
const OVERLOAD_MODEL_MS = Number(process.env.BENCH_OVERLOAD_MODEL_MS ?? 2000);
const OVERLOAD_LIMIT = Number(process.env.BENCH_OVERLOAD_LIMIT ?? 100);
/** `platforms.webhook.extra.output_retention`; default the gateway's own (50). */
const OUTPUT_RETENTION = process.env.BENCH_OUTPUT_RETENTION ? Number(process.env.BENCH_OUTPUT_RETENTION) : null;
const SECRET = 'bench-secret';
/** How long after the gateways started (and sat idle for a second) the cron jobs fall due. */
const CRON_LEAD_MS = 3000;
const ALL_CASES = ['webhook', 'cron-files', 'cron-pg1', 'cron-pg3', 'overload'];

const work = mkdtempSync(join(tmpdir(), 'agent-bench-agents-'));
// BENCH_KEEP=1 keeps the homes, the gateways' logs and the ledgers for a look afterwards.
if (process.env.BENCH_KEEP === '1') console.log(`homes and logs kept in ${work}`);
else atCleanup(async () => rmSync(work, { recursive: true, force: true, maxRetries: 5 }));

/**
 * Whether this build knows `agent.max_concurrent_sessions` (BENCH_SESSIONS_KEY=1 or 0 decides):
 * `agent config check` refuses an unknown key, so it is only written where it is known.
 */
function sessionsKeyKnown() {
  if (process.env.BENCH_SESSIONS_KEY === '1' || process.env.BENCH_SESSIONS_KEY === '0') return process.env.BENCH_SESSIONS_KEY === '1';
  const home = join(work, 'key-check');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, 'config.yaml'), 'model:\n  provider: command\n  command: ["true"]\nagent:\n  max_concurrent_sessions: 1\n');
  const check = spawnSync(process.execPath, [AGENT, 'config', 'check'], { env: { ...process.env, AGENT_HOME: home }, encoding: 'utf8' });
  return !`${check.stdout}${check.stderr}`.includes('agent.max_concurrent_sessions');
}

/** config.yaml of a gateway whose model is the fake one at `baseUrl`; webhooks on (for /metrics) at `port`. */
function gatewayConfig({ baseUrl, port, sessions, webhookRuns = 4, parallelJobs = 4, retention = 200, databaseUrl = null }) {
  const lines = [
    'timezone: UTC',
    'model:',
    '  provider: fake',
    '  name: bench-model',
    'providers:',
    '  fake:',
    '    type: openai',
    `    base_url: ${baseUrl}`,
    ...(SESSIONS_KEY ? ['agent:', `  max_concurrent_sessions: ${sessions}`] : []),
    'cron:',
    `  max_parallel_jobs: ${parallelJobs}`,
    'runs:',
    `  retention_count: ${retention}`,
    ...(databaseUrl ? ['database:', `  url: ${databaseUrl}`] : []),
    'platforms:',
    '  webhook:',
    '    enabled: true',
    '    extra:',
    '      host: 127.0.0.1',
    `      port: ${port}`,
    `      secret: ${SECRET}`,
    '      metrics: true',
    '      rate_limit: 100000000',
    `      max_concurrent_runs: ${webhookRuns}`,
    ...(OUTPUT_RETENTION ? [`      output_retention: ${OUTPUT_RETENTION}`] : []),
    '      routes:',
    '        bench:',
    '          events: [pull_request]',
    '          prompt: "Review pull request RUN-w{number}: {pull_request.title}"',
    '          allow_private_networks: true',
    '          deliver: log',
    '        probe:',
    '          events: [pull_request]',
    '          prompt: "probe {number}"',
    '          deliver_only: true',
    '          deliver: log',
    '',
  ];
  return lines.join('\n');
}

/** With BENCH_KEEP=1, what the fake model saw is kept beside the homes. */
function keep(name, value) {
  if (process.env.BENCH_KEEP === '1') writeFileSync(join(work, name), JSON.stringify(value));
}

function makeHome(name, config) {
  const home = join(work, name);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(join(home, 'config.yaml'), config);
  return home;
}

/** The page web_extract fetches when BENCH_TOOL=1: about 4 KB of HTML, served by this process. */
async function startPage() {
  const html = `<!doctype html><html><head><title>Bench page</title></head><body><h1>Release notes</h1>${'<p>The gateway streams every run at once; each paragraph here is what a tool result looks like.</p>'.repeat(40)}</body></html>`;
  const server = http.createServer((request, response) =>
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html),
  );
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  atCleanup(() => new Promise((resolve) => server.close(resolve)));
  server.unref();
  return `http://127.0.0.1:${server.address().port}/page`;
}

function payload(number) {
  return JSON.stringify({
    action: 'opened',
    number,
    pull_request: {
      number,
      title: `Change ${number}`,
      user: { login: 'octocat' },
      html_url: `https://example.com/octo/repo/pull/${number}`,
      body: 'The tick released its lock before the claims were written. '.repeat(12),
    },
    repository: { full_name: 'octo/repo' },
  });
}

/** POSTs one signed delivery over `agent`; resolves with its status (0: no answer) and latency. */
function postEvent(agent, port, route, number, delivery) {
  const body = Buffer.from(payload(number));
  const started = now();
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: `/webhooks/${route}`,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'x-github-event': 'pull_request',
          'x-github-delivery': delivery,
          'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode, started, ms: now() - started }));
      },
    );
    request.on('error', () => resolve({ status: 0, started, ms: now() - started }));
    request.end(body);
  });
}

/**
 * Waits until `ledger` holds `expected` finished runs, polling it once a second; the fake model's
 * counts tell progress. Ends early, the runs missing counted lost, once nothing moved for
 * `quietMs`. A gateway that dies fails the case with the end of its output.
 */
async function waitForRuns({ model, ledger, expected, gateways, quietMs }) {
  let signature = '';
  let movedAt = now();
  let ledgerAt = 0;
  let count = 0;
  const died = Promise.race(gateways.map((gateway) => gateway.died.then((how) => ({ gateway, how }))));
  let death = null;
  void died.then((dead) => {
    death = dead;
  });
  for (;;) {
    if (death) throw new Error(`a gateway died (${death.how}) during the runs; the end of its output:\n${death.gateway.tail()}`);
    const stats = await model.stats();
    if (now() - ledgerAt >= 1000) {
      count = await ledger.poll();
      ledgerAt = now();
    }
    const current = `${stats.requests_total}/${stats.ended}/${stats.sent_429}/${count}`;
    if (current !== signature) {
      signature = current;
      movedAt = now();
    }
    if (count >= expected) return;
    if (now() - movedAt > quietMs) return;
    await sleep(250);
  }
}

/** What the gateways' processes did between `before` (figures at idle) and now. */
function gatewayFigures(gateways, before, rssPeaks, runs) {
  const after = gateways.map((gateway) => processFigures(gateway.pid));
  const cpu = after.reduce((sum, figures, i) => sum + ((figures?.cpu ?? NaN) - before[i].cpu), 0);
  const grown = gateways.reduce((sum, gateway, i) => sum + Math.max(0, rssPeaks.get(gateway.pid) - before[i].rss), 0);
  return {
    peakRssMb: Math.max(...after.map((figures, i) => Math.max(figures?.hwm ?? 0, rssPeaks.get(gateways[i].pid)))) / 2 ** 20,
    idleRssMb: Math.max(...before.map((figures) => figures.rss)) / 2 ** 20,
    rssPerRunKb: grown / runs / 1024,
    cpuPerRunMs: (cpu / runs) * 1000,
  };
}

/**
 * Lost and doubled runs, and the time from each run's start (`startOf(tag)`: its post, or its
 * job's due time) to its first model request, from the model's requests and the ledger's records.
 */
function outcome({ tags, startOf, stats, records, tagOf, t0 }) {
  const firstArrival = new Map();
  const served = new Map();
  for (const request of stats.requests) {
    if (request.tag === null || request.turn !== 1) continue;
    if (!firstArrival.has(request.tag)) firstArrival.set(request.tag, request.arrival);
    if (request.status === 200) served.set(request.tag, (served.get(request.tag) ?? 0) + 1);
  }
  const recorded = new Map();
  const statuses = {};
  let lastFinish = -Infinity;
  for (const record of records) {
    const tag = tagOf(record);
    if (tag === null || !tags.has(tag)) continue;
    recorded.set(tag, (recorded.get(tag) ?? 0) + 1);
    statuses[record.status] = (statuses[record.status] ?? 0) + 1;
    lastFinish = Math.max(lastFinish, Date.parse(record.finished_at));
  }
  const toModel = [...tags]
    .filter((tag) => firstArrival.has(tag))
    .map((tag) => firstArrival.get(tag) - startOf(tag))
    .sort((a, b) => a - b);
  let doubled = 0;
  for (const tag of tags) doubled += Math.max(0, (served.get(tag) ?? 0) - 1, (recorded.get(tag) ?? 0) - 1);
  const lost = [...tags].filter((tag) => !recorded.has(tag)).length;
  const neverAtModel = [...tags].filter((tag) => !firstArrival.has(tag)).length;
  return {
    toModel,
    lost,
    doubled,
    neverAtModel,
    statuses,
    allRecordedS: lost === 0 ? (lastFinish - t0) / 1000 : NaN,
    lastRecordedS: Number.isFinite(lastFinish) ? (lastFinish - t0) / 1000 : NaN,
  };
}

async function webhookCase({ label, events, modelMs, limit }) {
  const pageUrl = TOOL ? await startPage() : null;
  const model = await startFakeModel({
    BENCH_MODEL_MS: String(modelMs),
    BENCH_CHUNKS: String(CHUNKS),
    BENCH_TOOL_URL: pageUrl ?? '',
    BENCH_TOOL_MS: String(TOOL_MS),
    BENCH_MODEL_LIMIT: String(limit),
    BENCH_MODEL_RETRY_AFTER: '1',
  });
  const port = await freePort();
  const home = makeHome(
    label,
    gatewayConfig({ baseUrl: model.baseUrl, port, sessions: events, webhookRuns: events, retention: Math.max(200, events + 100) }),
  );
  const gateway = await startGateway(home, join(work, `${label}.log`)).ready;
  // What measures or posts, stopped whatever happens (a gateway that dies included).
  let rss = null;
  let loop = null;
  let streamsOver = false;
  let probing = null;
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await sleep(1000);
    const before = [processFigures(gateway.pid)];
    rss = sampleRss([gateway.pid]);
    loop = scrapeEventLoop([port]);
    const ledger = fileLedger([home], 'webhook', (record) => record.subject === 'bench');

    const posts = new Map();
    const t0 = now();
    let next = 0;
    const burst = Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < events) {
          const number = next++;
          posts.set(`w${number}`, await postEvent(agent, port, 'bench', number, `agents-${label}-${number}`));
        }
      }),
    );
    // Probes: one post a half second to a deliver_only route (accepted the same way, no agent run),
    // to see the accept latency once the burst is over and the runs stream.
    const probes = [];
    let burstOver = false;
    void burst.then(() => {
      burstOver = true;
    });
    probing = (async () => {
      for (let k = 0; !streamsOver; k += 1) {
        const answer = await postEvent(probeAgent, port, 'probe', 1_000_000 + k, `agents-${label}-probe-${k}`);
        if (burstOver && !streamsOver) probes.push(answer.ms);
        await sleep(500);
      }
    })();
    await burst;
    const burstS = (now() - t0) / 1000;
    const lastPost = Math.max(...[...posts.values()].map((post) => post.started));
    const accepted = [...posts].filter(([, post]) => post.status >= 200 && post.status < 300);
    const acceptMs = [...posts.values()].map((post) => post.ms).sort((a, b) => a - b);
    await waitForRuns({
      model,
      ledger,
      expected: accepted.length,
      gateways: [gateway],
      quietMs: Math.max(30_000, 2 * (modelMs + TOOL_MS)),
    });
    const figures = gatewayFigures([gateway], before, rss.peak, events);
    streamsOver = true;
    await probing;
    await loop.stop();
    const stats = await model.stats(true);
    keep(`${label}-model.json`, stats);
    const tags = new Set(accepted.map(([tag]) => tag));
    const result = outcome({
      tags,
      startOf: (tag) => posts.get(tag).started,
      stats,
      records: ledger.records(),
      tagOf: (record) => (record.subject === 'bench' && record.delivery_id ? `w${record.delivery_id.split('-').pop()}` : null),
      t0,
    });
    probes.sort((a, b) => a - b);
    return {
      label,
      runs: events,
      accepted: accepted.length,
      refused: events - accepted.length,
      burstS,
      acceptMs,
      probeMs: probes,
      idealS: (modelMs + (TOOL ? TOOL_MS : 0)) / 1000,
      ...result,
      afterLastPostS: result.lost === 0 ? result.allRecordedS - (lastPost - t0) / 1000 : NaN,
      ...figures,
      eventLoop: loop.seen,
      model: stats,
    };
  } finally {
    streamsOver = true;
    rss?.stop();
    await Promise.all([probing, loop?.stop()]);
    agent.destroy();
    probeAgent.destroy();
    await stop(gateway.child);
    await stop(model.child);
  }
}

/** `count` one-shot jobs due at `dueAt`, as jobs.json holds them; job i's prompt carries RUN-c<i>. */
function dueJobs(count, dueAt) {
  const at = new Date(dueAt).toISOString();
  return Array.from({ length: count }, (_, i) => ({
    id: `a${i.toString(16).padStart(11, '0')}`,
    name: `bench ${i}`,
    prompt: `Write the release note RUN-c${i}`,
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
    created_at: new Date(dueAt - 3_600_000).toISOString(),
    model: null,
    provider: null,
    script: null,
    origin: null,
    paused_at: null,
  }));
}

function writeJobsFile(home, jobs) {
  mkdirSync(join(home, 'cron'), { recursive: true, mode: 0o700 });
  const file = join(home, 'cron', 'jobs.json');
  // Written whole and renamed into place, as the store itself writes it.
  writeFileSync(`${file}.bench`, JSON.stringify({ jobs, updated_at: new Date().toISOString() }, null, 2), { mode: 0o600 });
  renameSync(`${file}.bench`, file);
}

async function moveDuePostgres(url, due) {
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
}

async function cronCase({ label, replicas, postgres }) {
  const pageUrl = TOOL ? await startPage() : null;
  // Far in the future until every gateway is up; then moved to CRON_LEAD_MS from then.
  const jobs = dueJobs(N, Date.now() + 3_600_000);
  let database = null;
  if (postgres) {
    database = await scratchJobDatabase(jobs);
    if (!database) return null;
  }
  const undoDrop = database ? atCleanup(database.drop) : () => undefined;
  const model = await startFakeModel({
    BENCH_MODEL_MS: String(MODEL_MS),
    BENCH_CHUNKS: String(CHUNKS),
    BENCH_TOOL_URL: pageUrl ?? '',
    BENCH_TOOL_MS: String(TOOL_MS),
  });
  const gateways = [];
  try {
    const ports = [];
    const homes = [];
    for (let r = 0; r < replicas; r += 1) {
      const port = await freePort();
      ports.push(port);
      const config = gatewayConfig({ baseUrl: model.baseUrl, port, sessions: N, parallelJobs: N, databaseUrl: database?.url ?? null });
      homes.push(makeHome(`${label}-${r}`, config));
    }
    if (!postgres) writeJobsFile(homes[0], jobs);
    for (const home of homes) gateways.push(startGateway(home, `${home}.log`));
    await Promise.all(gateways.map((gateway) => gateway.ready));
    await sleep(1000);
    const before = gateways.map((gateway) => processFigures(gateway.pid));
    const rss = sampleRss(gateways.map((gateway) => gateway.pid));
    const loop = scrapeEventLoop(ports);
    const ledger = database ? await postgresLedger(database.url, 'cron') : fileLedger(homes, 'cron');
    try {
      const due = Date.now() + CRON_LEAD_MS;
      if (postgres) await moveDuePostgres(database.url, due);
      else writeJobsFile(homes[0], dueJobs(N, due));
      await waitForRuns({ model, ledger, expected: N, gateways, quietMs: Math.max(30_000, 2 * (MODEL_MS + TOOL_MS)) + CRON_LEAD_MS });
      const figures = gatewayFigures(gateways, before, rss.peak, N);
      await loop.stop();
      const stats = await model.stats(true);
      keep(`${label}-model.json`, stats);
      const index = new Map(jobs.map((job, i) => [job.id, `c${i}`]));
      const tags = new Set(index.values());
      const records = ledger.records();
      const result = outcome({ tags, startOf: () => due, stats, records, tagOf: (record) => index.get(record.subject) ?? null, t0: due });
      const perGateway = gateways.map((gateway) => records.filter((record) => record.claimant?.endsWith(`:${gateway.pid}`)).length);
      return {
        label,
        runs: N,
        idealS: (MODEL_MS + (TOOL ? TOOL_MS : 0)) / 1000,
        ...result,
        ...figures,
        eventLoop: loop.seen,
        model: stats,
        perGateway,
      };
    } finally {
      rss.stop();
      await loop.stop();
      await ledger.close?.();
    }
  } finally {
    await Promise.all(gateways.map((gateway) => stop(gateway.child)));
    await stop(model.child);
    if (database) {
      undoDrop();
      await database.drop();
    }
  }
}

const ms = (value) => (Number.isFinite(value) ? value.toFixed(value < 10 ? 1 : 0) : '–');
const seconds = (value) => (Number.isFinite(value) ? value.toFixed(1) : '–');

function printResults(results) {
  const cell = (pick) => results.map((result) => pick(result));
  const rows = [
    ['runs (events or jobs)', ...cell((r) => r.runs)],
    ['accepted / refused', ...cell((r) => (r.accepted === undefined ? '–' : `${r.accepted} / ${r.refused}`))],
    [
      'accept p50 / p99 ms (burst)',
      ...cell((r) => (r.acceptMs ? `${ms(quantile(r.acceptMs, 0.5))} / ${ms(quantile(r.acceptMs, 0.99))}` : '–')),
    ],
    ['burst posted in s', ...cell((r) => (r.burstS === undefined ? '–' : seconds(r.burstS)))],
    [
      'accept p50 / p99 ms (probes, streaming)',
      ...cell((r) =>
        r.probeMs?.length ? `${ms(quantile(r.probeMs, 0.5))} / ${ms(quantile(r.probeMs, 0.99))} (${r.probeMs.length})` : '–',
      ),
    ],
    [
      'to model p50 / p99 / max ms',
      ...cell((r) => `${ms(quantile(r.toModel, 0.5))} / ${ms(quantile(r.toModel, 0.99))} / ${ms(r.toModel.at(-1))}`),
    ],
    ['all recorded s (ideal)', ...cell((r) => `${seconds(r.allRecordedS)} (${seconds(r.idealS)})`)],
    ['last recorded s', ...cell((r) => seconds(r.lastRecordedS))],
    ['all recorded s after the last post', ...cell((r) => (r.afterLastPostS === undefined ? '–' : seconds(r.afterLastPostS)))],
    ['peak RSS MB (idle)', ...cell((r) => `${r.peakRssMb.toFixed(0)} (${r.idleRssMb.toFixed(0)})`)],
    ['RSS per run in flight KB', ...cell((r) => r.rssPerRunKb.toFixed(0))],
    ['gateway CPU ms per run', ...cell((r) => r.cpuPerRunMs.toFixed(1))],
    ['event loop p99 / max ms (60 s window)', ...cell((r) => `${ms(r.eventLoop.p99 * 1000)} / ${ms(r.eventLoop.max * 1000)}`)],
    ['event loop p99 ms (2 s windows)', ...cell((r) => ms(r.eventLoop.lagP99 * 1000))],
    [
      'recorded ok / other',
      ...cell(
        (r) =>
          `${r.statuses.ok ?? 0} / ${
            Object.entries(r.statuses)
              .filter(([status]) => status !== 'ok')
              .map(([status, count]) => `${count} ${status}`)
              .join(', ') || 0
          }`,
      ),
    ],
    ['lost / doubled', ...cell((r) => `${r.lost} / ${r.doubled}`)],
    ['never reached the model', ...cell((r) => r.neverAtModel)],
    ['model: peak open / serving', ...cell((r) => `${r.model.peak_open} / ${r.model.peak_serving}`)],
    ['model: requests / 429s sent', ...cell((r) => `${r.model.requests_total} / ${r.model.sent_429}`)],
    ['runs per gateway', ...cell((r) => (r.perGateway ? r.perGateway.join('/') : '–'))],
  ];
  printTable(['', ...cell((r) => r.label)], rows);
}

if (!existsSync(AGENT)) {
  console.log('dist/agent.js is missing: run `npm run build` first; no figures.');
  process.exit(0);
}
const SESSIONS_KEY = sessionsKeyKnown();
const asked = (process.env.BENCH_CASES ?? ALL_CASES.join(','))
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean)
  .flatMap((name) => (name === 'cron' ? ['cron-files', 'cron-pg1', 'cron-pg3'] : [name]));
const unknown = asked.filter((name) => !ALL_CASES.includes(name));
if (unknown.length > 0) {
  console.log(
    `BENCH_CASES names no case ${unknown.map((name) => `"${name}"`).join(', ')}; the cases are ${ALL_CASES.join(', ')} (and cron for the three cron cases).`,
  );
  process.exit(2);
}
console.log(
  `agent runs on the real path: N ${N}, model ${MODEL_MS} ms in ${CHUNKS} chunks${TOOL ? `, a web_extract turn first (${TOOL_MS} ms)` : ''}, ` +
    `${CONNECTIONS} connections; agent.max_concurrent_sessions ${SESSIONS_KEY ? 'set to N' : 'left out (this build does not know it)'}`,
);
if (asked.includes('overload')) {
  console.log(
    `overload: ${OVERLOAD_N} events, model ${OVERLOAD_MODEL_MS} ms, at most ${OVERLOAD_LIMIT} served at once (429, Retry-After: 1, beyond)`,
  );
}
const cases = {
  webhook: () => webhookCase({ label: 'webhook', events: N, modelMs: MODEL_MS, limit: 0 }),
  'cron-files': () => cronCase({ label: 'cron-files', replicas: 1, postgres: false }),
  'cron-pg1': () => cronCase({ label: 'cron-pg1', replicas: 1, postgres: true }),
  'cron-pg3': () => cronCase({ label: 'cron-pg3', replicas: 3, postgres: true }),
  overload: () => webhookCase({ label: 'overload', events: OVERLOAD_N, modelMs: OVERLOAD_MODEL_MS, limit: OVERLOAD_LIMIT }),
};
const results = [];
let failed = false;
try {
  for (const name of asked) {
    const started = now();
    try {
      const result = await cases[name]();
      if (result) {
        results.push(result);
        console.log(`  ${name}: done in ${((now() - started) / 1000).toFixed(0)} s`);
      }
    } catch (error) {
      failed = true;
      console.log(`  ${name}: failed: ${error.message}`);
    }
  }
  if (results.length > 0) {
    console.log('');
    printResults(results);
  }
} finally {
  await cleanUp();
}
// Nothing the bench started is left; whatever timer a failed case left running is not waited for.
process.exit(failed ? 1 : 0);
