/**
 * The live stream of the dashboard's pages, `GET /events` (docs/dashboard.md, Live): Server-Sent
 * Events naming what changed (LiveChanges), for a page to fetch again the parts it shows of it.
 * Served after the session check like every page, at most `maxStreams` at once; each stream
 * sends a comment every HEARTBEAT_MS (so that proxies keep it open and a gone page is noticed)
 * and ends after STREAM_MS, the browser then coming back with its Last-Event-ID.
 */
import type { Request, Response } from 'express';
import type { LiveChanges, LiveEvent, Repeat } from './liveChanges.js';
import { realRepeat } from './liveChanges.js';

const HEARTBEAT_MS = 15_000;
/** A stream ends after this long; the browser opens the next one with its Last-Event-ID. */
const STREAM_MS = 30 * 60_000;
/** How soon a browser comes back after a stream ended. */
const RETRY_MS = 1_000;
export const DEFAULT_MAX_STREAMS = 32;

export interface LiveStreamOptions {
  maxStreams?: number;
  repeat?: Repeat;
}

function eventText(event: LiveEvent, type = 'change'): string {
  return `id: ${event.id}\nevent: ${type}\ndata: ${JSON.stringify({ topics: event.topics })}\n\n`;
}

/** The route of `/events` over `live`. */
export function liveStream(live: LiveChanges, options: LiveStreamOptions = {}) {
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS;
  const repeat = options.repeat ?? realRepeat;
  let open = 0;
  return async (request: Request, response: Response): Promise<void> => {
    if (open >= maxStreams) {
      response
        .status(503)
        .set('retry-after', '30')
        .type('text')
        .send(`The dashboard already streams to ${maxStreams} pages; close some of them, then reload this one.`);
      return;
    }
    open += 1;
    const header = request.headers['last-event-id'];
    const query = (name: string) => (typeof request.query[name] === 'string' ? (request.query[name] as string) : null);
    const lastId = (typeof header === 'string' && header.trim() !== '' ? header.trim() : null) ?? query('last');
    const run = query('run');
    response.status(200).set({
      'content-type': 'text/event-stream; charset=utf-8',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    response.flushHeaders();
    response.write(`retry: ${RETRY_MS}\n\n`);
    const queued: LiveEvent[] = [];
    let ready = false;
    const send = (event: LiveEvent) => (ready ? response.write(eventText(event)) : queued.push(event));
    const stopListening = live.listen(send, run);
    const stopHeartbeat = repeat(HEARTBEAT_MS, () => response.write(': still here\n\n'));
    const ending = setTimeout(() => response.end(), STREAM_MS);
    ending.unref();
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      open -= 1;
      stopListening();
      stopHeartbeat();
      clearTimeout(ending);
    };
    response.on('close', close);
    let first: { event: LiveEvent; type: string };
    try {
      const missed = await live.since(lastId, run);
      first = missed ? { event: missed, type: 'change' } : { event: live.mark(), type: 'hello' };
    } catch {
      // The stores could not say what changed: the page fetches everything again.
      first = { event: live.mark(['jobs', 'runs', ...(run ? [`run:${run}`] : [])]), type: 'change' };
    }
    if (closed) return;
    // In the order of their ids, so that the browser's Last-Event-ID is the newest.
    const all = [...queued.map((event) => ({ event, type: 'change' })), first].sort((a, b) => Number(a.event.id) - Number(b.event.id));
    for (const each of all) response.write(eventText(each.event, each.type));
    ready = true;
  };
}
