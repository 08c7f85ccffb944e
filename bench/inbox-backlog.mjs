// npm run bench:inbox-backlog — what a large webhook backlog costs the gateway: the built
// `agent gateway` (run as `npm start` runs it) with a route whose one run slot is taken by an
// agent that does not finish, so that every event posted waits; BENCH_EVENTS (default 100,000)
// signed deliveries of about BENCH_PAYLOAD_BYTES (default 1,024) posted BENCH_CONNECTIONS
// (default 32) at a time. Once all are answered: the gateway's RSS (VmRSS and its peak, VmHWM,
// from /proc/<pid>/status). Then it is killed with SIGKILL and started again, now with an agent
// that answers at once: the time from the start until the `webhook listening on` line, the RSS
// then, and whether the first BENCH_ORDER_CHECK (default 500) runs started after the restart
// were the events waiting, in the order they were accepted. Linux only (/proc).
import { AGENT, benchConfig, freePort, GATEWAY_NODE_OPTIONS, kill, signedHeaders, sleep, startGateway } from './gatewayBench.mjs';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PAYLOAD_BYTES = Number(process.env.BENCH_PAYLOAD_BYTES ?? 1024);
const ORDER_CHECK = Number(process.env.BENCH_ORDER_CHECK ?? 500);
const TARGET_RSS_MB = 150;
const TARGET_LISTEN_MS = 2000;

/** VmRSS and VmHWM of `pid`, in MB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

function payloadOf(number) {
  const payload = {
    action: 'opened',
    number,
    pull_request: {
      number,
      title: `Change ${number}`,
      user: { login: 'octocat' },
      head: { ref: 'fix/tick-race' },
      base: { ref: 'main' },
      body: '',
    },
    repository: { full_name: 'octo/repo' },
  };
  const bare = Buffer.byteLength(JSON.stringify(payload));
  payload.pull_request.body = 'x'.repeat(Math.max(0, PAYLOAD_BYTES - bare));
  return JSON.stringify(payload);
}

/** Posts EVENTS signed deliveries, CONNECTIONS at a time; returns how many were accepted (2xx) and the other statuses. */
async function post(url) {
  let next = 0;
  let accepted = 0;
  const refused = new Map();
  async function worker() {
    while (next < EVENTS) {
      const number = next++;
      const body = payloadOf(number);
      const response = await fetch(url, {
        method: 'POST',
        headers: signedHeaders(body, number),
        body,
      }).catch((error) => ({ status: String(error.cause?.code ?? error.message), arrayBuffer: async () => undefined }));
      await response.arrayBuffer();
      if (response.status >= 200 && response.status < 300) accepted += 1;
      else refused.set(response.status, (refused.get(response.status) ?? 0) + 1);
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return { accepted, refused };
}

/** The numbers of the events waiting in the inbox's journals, in the order they were accepted (read a line at a time: they may be large). */
async function waitingInAcceptanceOrder(inbox) {
  const order = [];
  const done = new Set();
  for (const name of readdirSync(inbox)
    .filter((each) => each.startsWith('journal-'))
    .sort()) {
    for await (const line of createInterface({ input: createReadStream(join(inbox, name)), crlfDelay: Infinity })) {
      if (line.startsWith('{"accept":')) {
        const { accept } = JSON.parse(line);
        order.push({ id: accept.id, number: accept.payload.number });
      } else if (line.startsWith('{"done":')) done.add(JSON.parse(line).done);
    }
  }
  return order.filter((event) => !done.has(event.id)).map((event) => event.number);
}

/** Kills the agents of this bench that a gateway killed with SIGKILL left behind (each `sleep` of its duration). */
function killLeftAgents() {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${sleepFor}\0`) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

const mb = (value) => `${value.toFixed(0)} MB`;
const verdict = (ok) => (ok ? 'met' : 'MISSED');

if (process.platform !== 'linux') {
  console.log('bench/inbox-backlog.mjs reads /proc: Linux only; no figures.');
  process.exit(0);
}
if (!existsSync(AGENT)) {
  console.log('dist/agent.js is missing: run `npm run build` first; no figures.');
  process.exit(0);
}
// The agent's wait: a duration no other process uses, so that what this bench left can be found.
const sleepFor = `86400.${process.pid}`;
const work = mkdtempSync(join(tmpdir(), 'agent-inbox-backlog-'));
const children = [];
try {
  const home = join(work, 'home');
  mkdirSync(home, { recursive: true });
  const runs = join(work, 'runs.log');
  const quick = join(work, 'quick');
  // The agent records which event it was given, then, until `quick` exists, never finishes: with
  // one run slot, every later event waits in the inbox.
  const script = `while read -r line; do case $line in *EVENT-*) n=\${line##*EVENT-};; esac; done; echo "$n" >> ${runs}; [ -e ${quick} ] || exec sleep ${sleepFor}; echo done`;
  const port = await freePort();

  writeFileSync(join(home, 'config.yaml'), benchConfig({ port, script, maxConcurrentRuns: 1 }));

  console.log(
    `webhook inbox backlog: ${EVENTS} signed deliveries of ~${PAYLOAD_BYTES} bytes, ${CONNECTIONS} at a time, to a gateway whose one run never ends`,
  );
  console.log(`  the gateway runs as \`npm start\` runs it: node ${GATEWAY_NODE_OPTIONS.join(' ')} dist/agent.js gateway`);

  const first = await startGateway(home, join(work, 'gateway-1.log'));
  children.push(first.gateway);
  console.log(`  empty inbox: listening after ${first.listenMs.toFixed(0)} ms, RSS ${mb(memoryOf(first.gateway.pid).rss)}`);
  const postedAt = performance.now();
  const { accepted, refused } = await post(`http://127.0.0.1:${port}/webhooks/bench`);
  const seconds = (performance.now() - postedAt) / 1000;
  const loaded = memoryOf(first.gateway.pid);
  console.log(
    `  accepted ${accepted} in ${seconds.toFixed(1)} s (${(accepted / seconds).toFixed(0)}/s)` +
      (refused.size > 0 ? `, not accepted: ${[...refused].map(([status, count]) => `${count}× ${status}`).join(', ')}` : ''),
  );
  console.log(
    `  RSS with them waiting        ${mb(loaded.rss).padStart(7)} (peak ${mb(loaded.peak)})   target < ${TARGET_RSS_MB} MB: ${verdict(loaded.rss < TARGET_RSS_MB)}`,
  );

  const expected = await waitingInAcceptanceOrder(join(home, 'webhooks', 'inbox'));
  await kill(first.gateway, 'SIGKILL');
  writeFileSync(quick, '');
  const startedBefore = existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0;

  const second = await startGateway(home, join(work, 'gateway-2.log'));
  children.push(second.gateway);
  const restarted = memoryOf(second.gateway.pid);
  console.log(
    `  restart (kill -9) with ${expected.length} waiting: listening after ${second.listenMs.toFixed(0)} ms   target < ${TARGET_LISTEN_MS} ms: ${verdict(second.listenMs < TARGET_LISTEN_MS)}`,
  );
  console.log(
    `  RSS once listening           ${mb(restarted.rss).padStart(7)} (peak ${mb(restarted.peak)})   target < ${TARGET_RSS_MB} MB: ${verdict(restarted.rss < TARGET_RSS_MB)}`,
  );

  const check = Math.min(ORDER_CHECK, expected.length);
  const startedAfter = () => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean).slice(startedBefore) : []);
  const deadline = performance.now() + 120_000 + check * 200;
  while (startedAfter().length < check && performance.now() < deadline) await sleep(100);
  const started = startedAfter().slice(0, check).map(Number);
  const inOrder = started.length === check && started.every((number, index) => number === expected[index]);
  const running = memoryOf(second.gateway.pid);
  console.log(
    `  first ${check} runs started after the restart: ${started.length === check ? '' : `only ${started.length} started; `}` +
      `${inOrder ? 'the waiting events, in acceptance order' : 'NOT the waiting events in acceptance order'}; RSS then ${mb(running.rss)}`,
  );
} finally {
  await Promise.all(children.map((child) => kill(child, 'SIGTERM')));
  killLeftAgents();
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
}
