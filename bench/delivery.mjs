// Delivering a 20,000-character answer with `agent send` to a local server that answers like
// Telegram's Bot API: how many parts, and the wall time of the whole command (start-up, config,
// loading the Telegram adapter, splitting, one request per part), median of N runs. The time of
// the same command with a one-line answer shows what the 20,000 characters themselves cost.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const agent = new URL('../dist/agent.js', import.meta.url).pathname;

let parts = 0;
let messageId = 0;
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    const { text } = JSON.parse(body);
    parts += 1;
    if (text.length > 4096) throw new Error(`a part of ${text.length} characters`);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, result: { message_id: ++messageId } }));
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${server.address().port}`;

const home = mkdtempSync(join(tmpdir(), 'agent-bench-'));
writeFileSync(
  join(home, 'config.yaml'),
  `platforms:\n  telegram:\n    bot_token: "1:bench"\n    base_url: ${base}\n    home_channel: "-1001"\n`,
);
const env = { ...process.env, AGENT_HOME: home, NO_COLOR: '1' };

function send(text) {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [agent, 'send', 'telegram', '-'], { env, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - start) : reject(new Error(`agent send failed: ${stderr}`))));
    child.stdin.end(text);
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const paragraph = 'The nightly build passed on every target; the flaky integration test was retried once and passed. ';
const answer = `${paragraph.repeat(200)}\n\n\`\`\`text\n${'log line\n'.repeat(200)}\`\`\``.slice(0, 20_000);

try {
  await send('warm-up');
  const short = [];
  const long = [];
  let partsPerAnswer = 0;
  for (let i = 0; i < RUNS; i += 1) {
    short.push(await send('The build is green.'));
    const before = parts;
    long.push(await send(answer));
    partsPerAnswer = parts - before;
  }
  console.log(`delivery to a local Telegram API (agent send, median of ${RUNS})`);
  console.log(`  one-line answer                 ${median(short).toFixed(1)} ms   1 part`);
  console.log(
    `  ${answer.length.toLocaleString('en')}-character answer        ${median(long).toFixed(1)} ms   ${partsPerAnswer} parts of at most 4096`,
  );
} finally {
  server.close();
  rmSync(home, { recursive: true, force: true });
}
