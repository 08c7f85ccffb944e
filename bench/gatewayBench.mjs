// What the benches that drive the built gateway with signed webhook events share.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';

export const AGENT = new URL('../dist/agent.js', import.meta.url).pathname;
export const SECRET = 'bench-secret';
/** The Node options `npm start` gives the gateway (and, with BENCH_CPU_PROFILE=<directory>, a CPU profile written there at exit). */
export const GATEWAY_NODE_OPTIONS = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((word) => word.startsWith('--'))
  .concat(process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : []);

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on now. */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** config.yaml of a gateway whose one route, `bench`, runs `sh -c script` as its agent for each `pull_request`. */
export function benchConfig({ port, script, maxConcurrentRuns }) {
  return [
    'model:',
    '  provider: command',
    `  command: ${JSON.stringify(['sh', '-c', script])}`,
    'platforms:',
    '  webhook:',
    '    enabled: true',
    '    extra:',
    '      host: 127.0.0.1',
    `      port: ${port}`,
    `      secret: ${SECRET}`,
    '      rate_limit: 100000000',
    `      max_concurrent_runs: ${maxConcurrentRuns}`,
    '      routes:',
    '        bench:',
    '          events: [pull_request]',
    '          prompt: "Handle EVENT-{number}"',
    '',
  ].join('\n');
}

/** The headers of a signed `pull_request` delivery of `body`, numbered `number`. */
export function signedHeaders(body, number) {
  return {
    'content-type': 'application/json',
    'x-github-event': 'pull_request',
    'x-github-delivery': `bench-${number}`,
    'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
  };
}

/** Starts the gateway; resolves with it and the milliseconds until it printed its listening line. */
export function startGateway(home, logFile) {
  const started = performance.now();
  const gateway = spawn(process.execPath, [...GATEWAY_NODE_OPTIONS, AGENT, 'gateway'], {
    env: { ...process.env, AGENT_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = openSync(logFile, 'a');
  gateway.once('exit', () => closeSync(log));
  return new Promise((resolve, reject) => {
    let seen = '';
    let listening = false;
    const onData = (chunk) => {
      writeFileSync(log, chunk);
      if (listening) return;
      seen = (seen + chunk).slice(-4096);
      if (seen.includes('webhook listening on')) {
        listening = true;
        resolve({ gateway, listenMs: performance.now() - started });
      }
    };
    gateway.stdout.on('data', onData);
    gateway.stderr.on('data', onData);
    gateway.once('exit', (code, signal) => {
      if (!listening) reject(new Error(`the gateway exited (${code ?? signal}) before listening; see ${logFile}:\n${seen}`));
    });
  });
}

export async function kill(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** A signed ~1 KB `pull_request` payload like a code host sends, as JSON text. */
export function pullRequestPayload() {
  return JSON.stringify({
    action: 'opened',
    number: 1347,
    pull_request: {
      number: 1347,
      title: 'Fix the race between the tick lock and claims',
      user: { login: 'octocat' },
      head: { ref: 'fix/tick-race' },
      base: { ref: 'main' },
      html_url: 'https://example.com/octo/repo/pull/1347',
      diff_url: 'https://example.com/octo/repo/pull/1347.diff',
      merged: false,
      body: 'The tick released its lock before the claims were written. '.repeat(10),
    },
    repository: { full_name: 'octo/repo' },
    sender: { login: 'octocat' },
  });
}

/**
 * Writes the hooks.json of adnanh/webhook (the peer) for one hook `bench` with an HMAC-SHA256
 * rule on X-Hub-Signature-256 equivalent to ours, running `command`; returns its path.
 */
export function peerHooks(dir, command, secret = SECRET) {
  const path = `${dir}/hooks.json`;
  writeFileSync(
    path,
    JSON.stringify([
      {
        id: 'bench',
        'execute-command': command,
        'command-working-directory': dir,
        'trigger-rule': { match: { type: 'payload-hmac-sha256', secret, parameter: { source: 'header', name: 'X-Hub-Signature-256' } } },
      },
    ]),
  );
  return path;
}
