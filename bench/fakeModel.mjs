// A stand-in for an OpenAI-compatible model server, run by bench/agents.mjs as a process of its
// own so that what it costs is not counted as the gateway's: `POST /v1/chat/completions`
// streamed as OpenAI streams it (`data: {chunk}` events, `choices[0].delta`, a last usage chunk
// with `choices: []` when `stream_options.include_usage` asks for it, then `data: [DONE]`).
// Each answer takes BENCH_MODEL_MS (default 30000), its BENCH_CHUNKS content chunks (default
// 300) spread evenly over that time (one alone comes at its end). With BENCH_TOOL_URL set, a first turn offered the
// `web_extract` tool calls it for that URL instead, over BENCH_TOOL_MS (default 1000). Beyond
// BENCH_MODEL_LIMIT requests served at once (default none) it answers 429 with
// `Retry-After: BENCH_MODEL_RETRY_AFTER` (default 1).
//
// What it saw: `GET /stats` answers JSON: the peak of requests open at once (`peak_open`: every
// request from arrival to its end, 429s included; `peak_serving`: those being streamed), the 429s
// sent, and with `?requests=1` one entry per request: its tag (the first `RUN-<tag>` of the
// prompt), turn (1, or 2 once a tool result is in the messages), arrival and end (epoch ms),
// status, and whether the client went away before the end. It prints `{"port": …}` on stdout
// once listening, and exits on SIGTERM.
import http from 'node:http';

const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 30_000);
const CHUNKS = Math.max(1, Number(process.env.BENCH_CHUNKS ?? 300));
const TOOL_URL = process.env.BENCH_TOOL_URL || null;
const TOOL_MS = Number(process.env.BENCH_TOOL_MS ?? 1000);
const LIMIT = Number(process.env.BENCH_MODEL_LIMIT ?? 0) || Infinity;
const RETRY_AFTER = String(process.env.BENCH_MODEL_RETRY_AFTER ?? 1);
/** The period of the one timer that writes every stream's due chunks: one timer, not one per stream. */
const TICK_MS = Number(process.env.BENCH_MODEL_TICK_MS ?? 5);

const now = () => performance.timeOrigin + performance.now();
const requests = [];
let open = 0;
let serving = 0;
let peakOpen = 0;
let peakServing = 0;
let sent429 = 0;
let ids = 0;

/** Streams by the tick their next chunk is due in. */
const wheel = new Map();
let tickTimer = null;

/** The tick being run (or the last one run): a chunk is never put in a tick already past. */
let lastSlot = Math.floor(now() / TICK_MS);

function schedule(stream, at) {
  const slot = Math.max(Math.ceil(at / TICK_MS), lastSlot + 1);
  const list = wheel.get(slot);
  if (list) list.push(stream);
  else wheel.set(slot, [stream]);
  tickTimer ??= setInterval(tick, TICK_MS);
}

function tick() {
  const slot = Math.floor(now() / TICK_MS);
  for (let s = lastSlot + 1; s <= slot; s += 1) {
    lastSlot = s;
    const due = wheel.get(s);
    if (!due) continue;
    wheel.delete(s);
    for (const stream of due) stream.step();
  }
  if (wheel.size === 0) {
    clearInterval(tickTimer);
    tickTimer = null;
  }
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}

/**
 * One streamed answer: `count` events, each made by `eventAt(i)` when it is due (not all at the
 * arrival, which kept a burst of arrivals waiting behind the making of every answer), written one
 * at a time, evenly over `ms` from now.
 */
function stream(response, count, eventAt, ms, entry) {
  const started = now();
  // The first of several events goes out at once and the last at `ms`; a single one at `ms`.
  const spread = Math.max(1, count - 1);
  let next = 0;
  const self = {
    step() {
      if (response.destroyed) return;
      // Every event due by now goes out (one write when the ticks fall behind).
      const dueCount = Math.min(count, Math.floor(((now() - started) / Math.max(1, ms)) * spread) + (count === 1 ? 0 : 1));
      let text = '';
      while (next < dueCount) text += eventAt(next++);
      if (text) response.write(text);
      if (next >= count) {
        response.end();
        entry.end = now();
        return;
      }
      schedule(self, started + ((count === 1 ? 1 : next) * ms) / spread);
    },
  };
  self.step();
}

function answer(request, response, body, arrival) {
  const entry = { tag: null, turn: 1, arrival, end: null, status: 200, gone: false };
  requests.push(entry);
  let parsed = {};
  try {
    parsed = JSON.parse(body);
  } catch {
    // An empty body: answered all the same, tagged null.
  }
  const messages = Array.isArray(parsed.messages) ? parsed.messages : [];
  const prompt = messages
    .filter((message) => message?.role === 'user')
    .map((message) => textOf(message.content))
    .join('\n');
  entry.tag = /RUN-([A-Za-z0-9_]+)/.exec(prompt)?.[1] ?? null;
  const toolDone = messages.some((message) => message?.role === 'tool');
  entry.turn = toolDone ? 2 : 1;
  if (serving >= LIMIT) {
    sent429 += 1;
    entry.status = 429;
    entry.end = now();
    response
      .writeHead(429, { 'content-type': 'application/json', 'retry-after': RETRY_AFTER })
      .end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' } }));
    return;
  }
  serving += 1;
  peakServing = Math.max(peakServing, serving);
  response.once('close', () => {
    serving -= 1;
    if (entry.end === null) entry.gone = true;
  });
  const id = `chatcmpl-${(ids += 1)}`;
  const model = String(parsed.model ?? 'bench-model');
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const offersTool = Array.isArray(parsed.tools) && parsed.tools.some((tool) => tool?.function?.name === 'web_extract');
  const events = [];
  let finish;
  let ms = MODEL_MS;
  let completionTokens = CHUNKS;
  if (TOOL_URL && offersTool && !toolDone) {
    ms = TOOL_MS;
    const args = JSON.stringify({ url: `${TOOL_URL}?run=${entry.tag}` });
    const half = Math.floor(args.length / 2);
    events.push(chunk({ role: 'assistant', content: null }));
    events.push(
      chunk({ tool_calls: [{ index: 0, id: `call_${ids}`, type: 'function', function: { name: 'web_extract', arguments: '' } }] }),
    );
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }));
    finish = chunk({}, 'tool_calls');
    completionTokens = 20;
  } else {
    finish = chunk({}, 'stop');
  }
  const answerEvent = (n) =>
    n === 0 ? chunk({ role: 'assistant', content: `Answer for RUN-${entry.tag}:` }) : chunk({ content: ` word${n}` });
  if (parsed.stream_options?.include_usage === true) {
    const promptTokens = Math.ceil(body.length / 4);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: 0 },
    };
    finish += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage })}\n\n`;
  }
  // The finish, the usage and [DONE] go out with the last content chunk (or tool-call fragment).
  const count = events.length > 0 ? events.length : CHUNKS;
  const eventAt = (n) => (events.length > 0 ? events[n] : answerEvent(n)) + (n === count - 1 ? `${finish}data: [DONE]\n\n` : '');
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  stream(response, count, eventAt, ms, entry);
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (request.method === 'GET' && url.pathname === '/stats') {
    const ended = requests.filter((entry) => entry.status === 200 && entry.end !== null).length;
    const stats = {
      peak_open: peakOpen,
      peak_serving: peakServing,
      sent_429: sent429,
      open,
      serving,
      requests_total: requests.length,
      ended,
    };
    if (url.searchParams.get('requests') === '1') stats.requests = requests;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
    return;
  }
  if (request.method !== 'POST' || !url.pathname.endsWith('/chat/completions')) {
    response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${url.pathname}` } }));
    return;
  }
  open += 1;
  peakOpen = Math.max(peakOpen, open);
  response.once('close', () => {
    open -= 1;
  });
  // Arrived when its headers did: the time the client's request reached this server.
  const arrival = now();
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => answer(request, response, Buffer.concat(chunks).toString('utf8'), arrival));
});
server.headersTimeout = 0;
server.requestTimeout = 0;
// A backlog for a thousand connections opened at once: with Node's default of 511 the kernel drops
// the SYNs beyond it, and their clients send them again only a second later.
server.listen({ port: Number(process.env.BENCH_MODEL_PORT ?? 0), host: '127.0.0.1', backlog: 8192 }, () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
