/** What one GET brought back. The body is read only for a 2xx answer. */
export interface HttpAnswer {
  status: number;
  statusText: string;
  /** Where the answer came from, after redirects. */
  url: string;
  /** The media type without parameters, lowercase; '' when the server sent none. */
  mediaType: string;
  /** The `charset` parameter of Content-Type, if any. */
  charset: string | null;
  body: Buffer;
  /** Whether the body was longer than the byte cap and only its start was read. */
  truncated: boolean;
}

export type HttpGetResult = { ok: true; answer: HttpAnswer } | { ok: false; problem: string };

export interface HttpGetOptions {
  /** The run's signal: aborting it cancels the request. */
  signal: AbortSignal;
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
}

const USER_AGENT = 'agent/0.1 (web tools of a scheduled-agent service)';

/**
 * GETs `url` with the global fetch, following redirects, within a time limit that covers the
 * body too, reading at most `maxBytes` of it. Never throws: a failure to get an answer at all
 * is `{ok: false, problem}` with a short phrase (cancelled, timed out, connection refused …).
 */
export async function httpGet(url: URL, options: HttpGetOptions): Promise<HttpGetResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timeout]);
  try {
    const response = await fetch(url, {
      signal,
      redirect: 'follow',
      headers: { 'user-agent': USER_AGENT, ...options.headers },
    });
    const [mediaType = '', ...parameters] = (response.headers.get('content-type') ?? '').split(';');
    const charset = parameters.map((parameter) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(parameter)?.[1]).find(Boolean);
    const answer = {
      status: response.status,
      statusText: response.statusText,
      url: response.url || url.href,
      mediaType: mediaType.trim().toLowerCase(),
      charset: charset ?? null,
    };
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: true, answer: { ...answer, body: Buffer.alloc(0), truncated: false } };
    }
    return { ok: true, answer: { ...answer, ...(await readCapped(response, options.maxBytes)) } };
  } catch (error) {
    if (options.signal.aborted) return { ok: false, problem: 'the run was cancelled' };
    if (timeout.aborted) return { ok: false, problem: `no complete answer within ${options.timeoutMs / 1000} s` };
    return { ok: false, problem: networkProblem(error) };
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  if (!response.body) return { body: Buffer.alloc(0), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { body: Buffer.concat(chunks), truncated: false };
    if (kept + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - kept));
      await reader.cancel().catch(() => undefined);
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(value);
    kept += value.length;
  }
}

/**
 * fetch says only "fetch failed"; its cause says what happened ("connect ECONNREFUSED …").
 * Read by shape, not instanceof: fetch's errors may come from another realm (test sandboxes).
 */
function networkProblem(error: unknown): string {
  const cause = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  return messageOf(cause) ?? messageOf(error) ?? String(error);
}

function messageOf(value: unknown): string | null {
  const message = typeof value === 'object' && value !== null ? (value as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message !== '' ? message : null;
}

/** Decodes a body by its declared charset, UTF-8 when none is declared or it is unknown. */
export function decodeBody(body: Buffer, charset: string | null): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
