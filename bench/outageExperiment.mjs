// One case of the database-outage experiment (bench/outage.mjs runs the matrix; a jest test under
// test/e2e runs one short case): two built gateways (dist/agent.js gateway) on one scratch
// PostgreSQL database, signed webhook events sent to them alternately at a fixed rate, the database
// made unreachable for a while (ALLOW_CONNECTIONS false and every session of it terminated), then
// reachable again. The route's agent is a `command` stand-in that appends the event's number to a
// file outside both homes when it starts and when it ends, so every run is counted whoever ran it.
//
// A sender behaves as a code host: an event answered anything but 202 or 200 (a 503 while the
// database is away, a refused connection) is sent again, with the same delivery id, to the other
// replica a second later; an event is accepted once either answered 202 (or 200: a duplicate of
// one it has). After the database is back the sending goes on for a while, then stops; the case
// ends once every accepted event ran and the inbox is empty, plus a quiet period long enough for a
// late second run (two leases) to show.
import { spawn as spawnChild } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer } from 'node:net';
import pg from 'pg';

const AGENT = new URL('../dist/agent.js', import.meta.url).pathname;
const SECRET = 'outage-secret';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function admin(serverUrl, statement) {
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres`, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await client.query(statement);
  } finally {
    await client.end();
  }
}

/** What the stand-in agent runs: the event's number from its prompt, a line when it starts and one when it ends. */
function agentScript(runsFile, runMs) {
  return [
    "n=$(grep -o 'EVENT-[0-9]*' | head -n 1)",
    `echo "start $n $$" >> ${runsFile}`,
    `sleep ${(runMs / 1000).toFixed(2)}`,
    `echo "end $n $$ $(date +%s%3N)" >> ${runsFile}`,
    'echo done',
  ].join('\n');
}

function gatewayConfig({ url, port, leaseSeconds, runsFile, runMs, maxRuns }) {
  return [
    'timezone: UTC',
    'model:',
    '  provider: command',
    `  command: ${JSON.stringify(['sh', '-c', agentScript(runsFile, runMs)])}`,
    // The agents run in the sandbox where bubblewrap works; the file they count in must stay writable there.
    'tools:',
    `  sandbox_writable: [${JSON.stringify(dirname(runsFile))}]`,
    'database:',
    `  url: ${url}`,
    ...(leaseSeconds ? [`  lease_seconds: ${leaseSeconds}`] : []),
    'platforms:',
    '  webhook:',
    '    enabled: true',
    '    extra:',
    '      host: 127.0.0.1',
    `      port: ${port}`,
    `      secret: ${SECRET}`,
    '      rate_limit: 100000000',
    `      max_concurrent_runs: ${maxRuns}`,
    '      routes:',
    '        outage:',
    '          events: [pull_request]',
    '          prompt: "Handle EVENT-{number}"',
    '',
  ].join('\n');
}

/**
 * Runs one case; resolves with its figures. `options`:
 * - serverUrl: a PostgreSQL server URL without a database (trust auth), default the local one;
 * - outageSeconds, leaseSeconds (null: the default lease), ratePerSecond (4), runMs (500),
 *   beforeSeconds (8: sending before the outage), afterSeconds (10: sending after it);
 * - spawn: how processes are started (a test passes its registered spawn);
 * - log: where progress lines go (default nowhere).
 */
export async function runOutageCase(options) {
  const serverUrl = options.serverUrl ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const spawn = options.spawn ?? spawnChild;
  const log = options.log ?? (() => undefined);
  const rate = options.ratePerSecond ?? 4;
  const runMs = options.runMs ?? 500;
  const leaseSeconds = options.leaseSeconds ?? null;
  const leaseMs = (leaseSeconds ?? 30) * 1000;
  const work = mkdtempSync(join(tmpdir(), 'agent-outage-'));
  const runsFile = join(work, 'runs.log');
  writeFileSync(runsFile, '');
  const name = `agent_outage_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const url = `${serverUrl}/${name}`;
  const gateways = [];
  let allowed = true;
  const allow = async (on) => {
    await admin(serverUrl, `ALTER DATABASE ${name} ALLOW_CONNECTIONS ${on ? 'true' : 'false'}`);
    allowed = on;
  };
  try {
    const migrated = await new Promise((resolve) => {
      const child = spawn(process.execPath, [AGENT, 'db', 'migrate'], {
        env: { ...process.env, AGENT_DATABASE_URL: url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (chunk) => (text += chunk));
      child.stderr.on('data', (chunk) => (text += chunk));
      child.on('exit', (code) => resolve({ code, text }));
    });
    if (migrated.code !== 0) throw new Error(`agent db migrate failed: ${migrated.text}`);

    for (const label of ['a', 'b']) {
      const home = join(work, label);
      mkdirSync(home, { recursive: true, mode: 0o700 });
      const port = await freePort();
      writeFileSync(join(home, 'config.yaml'), gatewayConfig({ url, port, leaseSeconds, runsFile, runMs, maxRuns: 8 }));
      const logFile = join(work, `${label}.log`);
      const child = spawn(process.execPath, [AGENT, 'gateway'], {
        env: { ...process.env, AGENT_HOME: home, AGENT_DATABASE_URL: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const gateway = { label, port, child, output: '', logFile };
      const gather = (chunk) => {
        gateway.output += chunk;
        appendFileSync(logFile, chunk);
      };
      child.stdout.setEncoding('utf8').on('data', gather);
      child.stderr.setEncoding('utf8').on('data', gather);
      gateways.push(gateway);
    }
    for (const gateway of gateways) {
      const deadline = Date.now() + 60_000;
      while (!gateway.output.includes('gateway started')) {
        if (gateway.child.exitCode !== null) throw new Error(`gateway ${gateway.label} exited at start:\n${gateway.output}`);
        if (Date.now() > deadline) throw new Error(`gateway ${gateway.label} did not start within a minute:\n${gateway.output}`);
        await sleep(100);
      }
    }
    log(`  gateways up (lease ${leaseSeconds ?? 'default'}, outage ${options.outageSeconds} s)`);

    // Sending: event n first to replica n % 2, again to the other after each refusal.
    const accepted = new Set();
    const statuses = new Map();
    const deliveries = [];
    let sending = true;
    let sent = 0;
    const deliver = async (n) => {
      const body = JSON.stringify({ number: n, action: 'opened' });
      const headers = {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': `outage-${n}`,
        'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      };
      for (let attempt = 0; ; attempt += 1) {
        const gateway = gateways[(n + attempt) % 2];
        const status = await fetch(`http://127.0.0.1:${gateway.port}/webhooks/outage`, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(20_000),
        }).then(
          async (response) => {
            await response.arrayBuffer();
            return response.status;
          },
          () => 0,
        );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 202 || status === 200) {
          accepted.add(n);
          return;
        }
        await sleep(1000);
      }
    };
    const sender = (async () => {
      const started = Date.now();
      while (sending) {
        sent += 1;
        deliveries.push(deliver(sent));
        await sleep(Math.max(0, started + (sent * 1000) / rate - Date.now()));
      }
    })();

    await sleep((options.beforeSeconds ?? 8) * 1000);
    // The outage: no new session, and every open one ended.
    const outageStart = Date.now();
    await allow(false);
    await admin(serverUrl, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
    log(`  database away at event ${sent}`);
    await sleep(Math.max(0, outageStart + options.outageSeconds * 1000 - Date.now()));
    await allow(true);
    const back = Date.now();
    // The events sent until the return: those the outage held back (and those run before it).
    const sentByReturn = sent;
    log(`  database back at event ${sent} after ${((back - outageStart) / 1000).toFixed(1)} s`);
    await sleep((options.afterSeconds ?? 10) * 1000);
    sending = false;
    await sender;
    // Every event sent is accepted in the end (the senders retry until it is).
    const allAccepted = Promise.all(deliveries);
    const acceptDeadline = Date.now() + 120_000;
    while (accepted.size < sent && Date.now() < acceptDeadline) await sleep(200);
    const lastAccepted = Date.now();
    if (accepted.size < sent) log(`  ${sent - accepted.size} event(s) still not accepted after two minutes`);
    void allAccepted;

    const runsOf = () => {
      const starts = new Map();
      const ends = new Map();
      const endedAt = new Map();
      for (const line of readFileSync(runsFile, 'utf8').split('\n')) {
        const match = /^(start|end) EVENT-(\d+) \d+(?: (\d+))?/.exec(line);
        if (!match) continue;
        const counts = match[1] === 'start' ? starts : ends;
        const n = Number(match[2]);
        counts.set(n, (counts.get(n) ?? 0) + 1);
        if (match[3]) endedAt.set(n, Math.max(endedAt.get(n) ?? 0, Number(match[3])));
      }
      return { starts, ends, endedAt };
    };
    const pending = async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query('SELECT count(*)::int AS count FROM agent_webhook_events')).rows[0].count;
      } finally {
        await client.end();
      }
    };
    // Drained: every accepted event ran to its end and the inbox holds nothing.
    const drainDeadline = Date.now() + 300_000;
    let drainedAt = null;
    while (Date.now() < drainDeadline) {
      const { ends } = runsOf();
      if ([...accepted].every((n) => ends.has(n)) && (await pending()) === 0) {
        drainedAt = Date.now();
        break;
      }
      await sleep(250);
    }
    // A second run comes, if it comes, once a lease lapsed: wait two leases more (at least 10 s).
    await sleep(Math.max(10_000, 2 * leaseMs + 2_000));
    const { starts, ends, endedAt } = runsOf();
    const heldBack = [...accepted].filter((n) => n <= sentByReturn);
    const backlogDoneAt = heldBack.every((n) => endedAt.has(n)) ? Math.max(back, ...heldBack.map((n) => endedAt.get(n))) : null;
    const ranOnce = [...accepted].filter((n) => starts.get(n) === 1).length;
    const ranTwice = [...starts.entries()].filter(([, count]) => count > 1);
    const lost = [...accepted].filter((n) => !ends.has(n));
    const stillWaiting = await pending();
    return {
      outageSeconds: options.outageSeconds,
      leaseSeconds,
      sent,
      accepted: accepted.size,
      ranOnce,
      ranTwice: ranTwice.length,
      ranTwiceEvents: ranTwice.map(([n, count]) => `${n}x${count}`),
      maxRuns: Math.max(0, ...starts.values()),
      lost: lost.length,
      lostEvents: lost,
      stillWaiting,
      notAccepted: sent - accepted.size,
      drainSeconds: drainedAt === null ? null : (drainedAt - back) / 1000,
      backlogSeconds: backlogDoneAt === null ? null : (backlogDoneAt - back) / 1000,
      drainAfterLastAcceptSeconds: drainedAt === null ? null : Math.max(0, drainedAt - lastAccepted) / 1000,
      statuses: Object.fromEntries(statuses),
      gatewaysAlive: gateways.every((gateway) => gateway.child.exitCode === null),
      logs: Object.fromEntries(gateways.map((gateway) => [gateway.label, gateway.output])),
      work,
    };
  } finally {
    for (const gateway of gateways) {
      if (gateway.child.exitCode === null && gateway.child.signalCode === null) {
        const exited = new Promise((resolve) => gateway.child.once('exit', resolve));
        gateway.child.kill('SIGKILL');
        await exited;
      }
    }
    if (!allowed) await allow(true).catch(() => undefined);
    await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    if (!options.keepWork) rmSync(work, { recursive: true, force: true });
  }
}
