// npm run bench:webhook-rate — webhook accept latency at a fixed rate (open loop, not saturation):
// signed ~1 KB pull_request deliveries at 1,000 requests/s (BENCH_RATE) for 10 s (BENCH_SECONDS),
// each latency counted from the moment its request was due (bench/openLoopClient.mjs), after a
// 2 s warm-up at the same rate. Through the gateway's full accept path (bench/webhookBench.ts) on
// the file store, then with a scratch PostgreSQL database as the store (inbox, delivery ids, rate
// limit), then adnanh/webhook 2.8 running /bin/true (Debian package `webhook`, installed when
// missing). The worker runs beside the listener as in the gateway, its slots held by a stand-in
// agent that answers after 1 s (BENCH_AGENT_MS; 0 answers at once), as a real agent would: the
// events pile up in the inbox as in a flood, and what is measured is the accept, not 1,000 runs a
// second (bench/webhook.mjs measures that throughput). Target: p99 under 10 ms on both stores.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleBenchEntry } from './bundleEntry.mjs';
import { GATEWAY_NODE_OPTIONS, SECRET, freePort, kill, peerHooks, pullRequestPayload } from './gatewayBench.mjs';
import { scratchJobDatabase } from './postgresBench.mjs';

const RATE = Number(process.env.BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const client = new URL('./openLoopClient.mjs', import.meta.url).pathname;
const AGENT_MS = process.env.BENCH_AGENT_MS ?? '1000';

/** Runs the open-loop client against `url` for `seconds`; its JSON figures. */
function load(url, seconds, bodyFile) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [client, url, String(RATE), String(seconds), SECRET, bodyFile], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the load client failed (${code})`))));
  });
}

function waitForReady(child) {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      seen += chunk;
      const match = /ready (\d+)/.exec(seen);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the bench gateway exited (${code}):\n${seen}`)));
  });
}

const line = (name, figures) =>
  `  ${name.padEnd(34)} p50 ${String(figures.p50).padStart(7)} ms  p99 ${String(figures.p99).padStart(7)} ms  max ${String(figures.max).padStart(8)} ms  ` +
  `answers ${Object.entries(figures.statuses)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ')}`;

const work = mkdtempSync(join(tmpdir(), 'agent-webhook-rate-'));
const children = [];
try {
  const bodyFile = join(work, 'body.json');
  writeFileSync(bodyFile, pullRequestPayload());
  const entry = join(work, 'webhookBench.mjs');
  await bundleBenchEntry('webhookBench', entry);
  console.log(
    `webhook accept at a fixed ${RATE} requests/s for ${SECONDS} s (open loop, after a 2 s warm-up), signed pull_request, loopback; agent answers after ${AGENT_MS} ms`,
  );

  const ours = async (name, env) => {
    const home = join(work, name);
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
    const log = openSync(join(work, `${name}.log`), 'a');
    const gateway = spawn(process.execPath, [...GATEWAY_NODE_OPTIONS, entry, home], {
      stdio: ['ignore', log, 'pipe'],
      env: { ...process.env, BENCH_AGENT_MS: AGENT_MS, ...env },
    });
    children.push(gateway);
    const port = await waitForReady(gateway);
    const url = `http://127.0.0.1:${port}/webhooks/bench`;
    await load(url, 2, bodyFile);
    const figures = await load(url, SECONDS, bodyFile);
    console.log(line(`agent gateway, ${name}`, figures));
    await kill(gateway, 'SIGTERM');
    return figures;
  };

  await ours('file store', { AGENT_DATABASE_URL: '' });
  const database = await scratchJobDatabase([]);
  if (database) {
    try {
      await ours('PostgreSQL', { AGENT_DATABASE_URL: database.url });
    } finally {
      await database.drop();
    }
  }

  const installed =
    spawnSync('sh', ['-c', 'command -v webhook']).status === 0 ||
    spawnSync('sh', ['-c', '(apt-get install -y -qq webhook || (apt-get update -qq && apt-get install -y -qq webhook)) >/dev/null 2>&1'])
      .status === 0;
  if (!installed) {
    console.log('  adnanh/webhook                     not installed and could not be installed');
  } else {
    const hooks = peerHooks(work, '/bin/true');
    const port = await freePort();
    const peer = spawn('webhook', ['-hooks', hooks, '-ip', '127.0.0.1', '-port', String(port)], { stdio: 'ignore' });
    children.push(peer);
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await fetch(`http://127.0.0.1:${port}/`);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const url = `http://127.0.0.1:${port}/hooks/bench`;
    await load(url, 2, bodyFile);
    console.log(line('adnanh/webhook 2.8 (peer)', await load(url, SECONDS, bodyFile)));
  }
} finally {
  await Promise.all(children.map((child) => kill(child, 'SIGKILL')));
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
}
