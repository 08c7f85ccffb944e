// npm run bench:webhook — accepted requests per second and p99 latency on loopback for a signed
// ~1 KB pull_request payload, through our full accept path (inbox included, agent replaced by a
// no-op) and, in the same run, through adnanh/webhook (Debian package `webhook`) with an
// equivalent HMAC rule. Load from wrk (Debian package `wrk`). Installs both when missing.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleBenchEntry } from './bundleEntry.mjs';
import { peerHooks, pullRequestPayload } from './gatewayBench.mjs';

const DURATION = process.env.BENCH_SECONDS ?? '10';
const CONNECTIONS = process.env.BENCH_CONNECTIONS ?? '16';
const SECRET = 'bench-secret';
// Ours runs with the Node options `npm start` gives the gateway (package.json), so that the
// figures are those of the gateway as shipped (docs/gateway.md, "Running it").
const GATEWAY_NODE_OPTIONS = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((word) => word.startsWith('--'));

function ensureInstalled(program, debianPackage) {
  if (spawnSync('sh', ['-c', `command -v ${program}`]).status === 0) return true;
  console.log(`installing ${debianPackage} …`);
  const install = spawnSync('sh', [
    '-c',
    `(apt-get install -y -qq ${debianPackage} || (apt-get update -qq && apt-get install -y -qq ${debianPackage})) >/dev/null 2>&1`,
  ]);
  return install.status === 0;
}

function wrkScript(dir, body, signature) {
  const path = join(dir, 'signed.lua');
  writeFileSync(
    path,
    `wrk.method = "POST"
wrk.body = ${JSON.stringify(body)}
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-GitHub-Event"] = "pull_request"
wrk.headers["X-Hub-Signature-256"] = "${signature}"
local counter = 0
local prefix = "${randomUUID()}"
function setup(thread) thread:set("tid", tostring(math.random(1, 1000000000))) end
function request()
  counter = counter + 1
  wrk.headers["X-GitHub-Delivery"] = prefix .. "-" .. tid .. "-" .. counter
  return wrk.format()
end
`,
  );
  return path;
}

function runWrk(url, script) {
  const output = execFileSync('wrk', ['-t2', `-c${CONNECTIONS}`, `-d${DURATION}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
  const p99Text = /\s99%\s+([\d.]+)(us|ms|s)/.exec(output);
  const p99 = p99Text ? Number(p99Text[1]) * { us: 0.001, ms: 1, s: 1000 }[p99Text[2]] : NaN;
  const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  return { rps, p99, errors };
}

function waitForLine(child, pattern, timeoutMs = 15_000) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no "${pattern}" within ${timeoutMs} ms:\n${seen}`)), timeoutMs);
    const onData = (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.stderr?.setEncoding('utf8').on('data', onData);
  });
}

async function waitForHttp(url, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(url, { method: 'GET' });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`${url} did not answer`);
}

const line = (name, result) =>
  `  ${name.padEnd(34)} ${result.rps.toFixed(0).padStart(7)} req/s   p99 ${result.p99.toFixed(2).padStart(7)} ms` +
  (result.errors ? `   (${result.errors} non-2xx)` : '');

if (!ensureInstalled('wrk', 'wrk')) {
  console.log('wrk is not installed and could not be installed; no figures.');
  process.exit(0);
}
const work = mkdtempSync(join(tmpdir(), 'agent-webhook-bench-'));
const children = [];
try {
  const body = pullRequestPayload();
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const script = wrkScript(work, body, signature);
  console.log(
    `webhook accept path, signed ${Buffer.byteLength(body)}-byte pull_request, wrk -t2 -c${CONNECTIONS} -d${DURATION}s on loopback`,
  );
  console.log(`  ours runs as \`npm start\` runs the gateway: node ${GATEWAY_NODE_OPTIONS.join(' ')}`);

  // Ours: the gateway's listener in a process of its own, agent replaced by a no-op, logging at info.
  const home = join(work, 'home');
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'config.yaml'),
    [
      'platforms:',
      '  webhook:',
      '    enabled: true',
      '    extra:',
      '      host: 127.0.0.1',
      '      port: 0',
      `      secret: ${SECRET}`,
      '      rate_limit: 100000000',
      '      routes:',
      '        bench:',
      '          events: [pull_request]',
      '',
    ].join('\n'),
  );
  const entry = join(work, 'webhookBench.mjs');
  await bundleBenchEntry('webhookBench', entry);
  const log = openSync(join(work, 'gateway.log'), 'a');
  const ours = spawn(process.execPath, [...GATEWAY_NODE_OPTIONS, entry, home], { stdio: ['ignore', log, 'pipe'] });
  children.push(ours);
  const [, port] = await waitForLine(ours, /ready (\d+)/);
  const oursResult = runWrk(`http://127.0.0.1:${port}/webhooks/bench`, script);
  console.log(line('agent gateway (this project)', oursResult));

  // The peer: adnanh/webhook with an equivalent HMAC-SHA256 rule, running /bin/true.
  if (!ensureInstalled('webhook', 'webhook')) {
    console.log('  adnanh/webhook                     not installed and could not be installed');
  } else {
    const hooks = peerHooks(work, '/bin/true');
    const peerPort = Number(port) + 1;
    const peer = spawn('webhook', ['-hooks', hooks, '-ip', '127.0.0.1', '-port', String(peerPort)], { stdio: 'ignore' });
    children.push(peer);
    await waitForHttp(`http://127.0.0.1:${peerPort}/`);
    const peerResult = runWrk(`http://127.0.0.1:${peerPort}/hooks/bench`, script);
    console.log(line('adnanh/webhook 2.8 (peer)', peerResult));
    console.log(
      `  ratio ${(oursResult.rps / peerResult.rps).toFixed(2)}x the peer's throughput (target >= 1), our p99 ${oursResult.p99.toFixed(2)} ms (target < 10 ms)`,
    );
  }
} finally {
  // Let both servers exit before their files are removed from under them.
  await Promise.all(
    children.map((child) =>
      child.exitCode !== null
        ? undefined
        : new Promise((resolve) => {
            child.once('exit', resolve);
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
          }),
    ),
  );
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
}
