// An open-loop load generator: sends signed deliveries to <url> at a fixed <rate> per second for
// <seconds>, whatever the answers take (requests are not held back by slow ones), and measures
// each latency from the moment its request was due to be sent, so that a stall counts against the
// server (no coordinated omission). Prints one JSON line: sent, answered by status, latency
// percentiles in ms. Run by bench/webhook-rate.mjs in a process of its own.
// argv: <url> <rate> <seconds> <secret> <body file>
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';

const [url, rateText, secondsText, secret, bodyFile] = process.argv.slice(2);
const rate = Number(rateText);
const total = Math.round(rate * Number(secondsText));
const body = readFileSync(bodyFile);
const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const prefix = randomUUID();

const latencies = [];
const statuses = {};
let finished = 0;
const start = performance.now() + 200;

function send(n, dueAt) {
  const request = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        'content-length': body.length,
        'x-github-event': 'pull_request',
        'x-github-delivery': `${prefix}-${n}`,
        'x-hub-signature-256': signature,
      },
    },
    (response) => {
      response.resume();
      response.on('end', () => {
        latencies.push(performance.now() - dueAt);
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
        done();
      });
    },
  );
  request.on('error', () => {
    statuses.error = (statuses.error ?? 0) + 1;
    done();
  });
  request.end(body);
}

function done() {
  finished += 1;
  if (finished < total) return;
  latencies.sort((a, b) => a - b);
  const at = (q) => Number(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]?.toFixed(2));
  process.stdout.write(`${JSON.stringify({ sent: total, statuses, p50: at(0.5), p99: at(0.99), max: at(1) })}\n`);
  agent.destroy();
}

// Every millisecond, sends whatever has fallen due by now.
let next = 0;
const timer = setInterval(() => {
  const now = performance.now();
  while (next < total && start + (next * 1000) / rate <= now) {
    send(next, start + (next * 1000) / rate);
    next += 1;
  }
  if (next >= total) clearInterval(timer);
}, 1);
