import { inject, injectable } from 'inversify';
import type { Logger } from '../../application/ports/Logger.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { AgentConfig } from '../config/AgentConfig.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { ToolInputError, type Tool, type ToolCallContext, type ToolSpec } from '../../application/agent/ports/Tool.js';
import { ToolArguments } from './ToolArguments.js';
import { decodeBody, httpGet } from './httpGet.js';

const TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_RESULTS = 5;
const MAX_RESULTS = 20;
const MAX_SNIPPET_CHARS = 500;

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

/**
 * `web_search`: asks a SearXNG instance (`GET <base>/search?q=…&format=json`) and returns the
 * top results as JSON `{query, results: [{title, url, snippet}]}`, or `{query, error}` when the
 * search failed. The instance is `search.searxng_url` in config.yaml; without a usable one the
 * tool is not available, and a URL that is not http(s) is reported once as a warning.
 */
@injectable()
export class WebSearchTool implements Tool {
  readonly spec: ToolSpec = {
    name: 'web_search',
    description:
      'Search the web. Returns JSON with the top results, each with title, url and snippet; ' + 'read a result in full with web_extract.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to search for.' },
        max_results: {
          type: 'integer',
          description: `How many results to return; default ${DEFAULT_RESULTS}, at most ${MAX_RESULTS}.`,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
  };

  /** The SearXNG search endpoint, or null when no usable backend is configured. */
  private readonly endpoint: URL | null;

  constructor(@inject(CONFIG_TOKENS.AgentConfig) config: AgentConfig, @inject(TOKENS.Logger) log: Logger) {
    const configured = searxngUrlFrom(config);
    if ('problem' in configured) log.warn(configured.problem);
    this.endpoint = 'endpoint' in configured ? configured.endpoint : null;
  }

  isAvailable(): boolean {
    return this.endpoint !== null;
  }

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    const input = new ToolArguments('web_search', args);
    input.rejectUnknown(['query', 'max_results']);
    const query = input.requiredString('query', 'what to search for').trim();
    const count = input.nullableInteger('max_results') ?? DEFAULT_RESULTS;
    if (count < 1 || count > MAX_RESULTS) {
      throw new ToolInputError(`web_search: "max_results" must be between 1 and ${MAX_RESULTS}.`);
    }
    if (this.endpoint === null) {
      return JSON.stringify({ query, error: 'No search backend is configured (search.searxng_url in config.yaml).' });
    }
    const outcome = await this.search(this.endpoint, query, count, context.signal);
    return JSON.stringify('error' in outcome ? { query, error: outcome.error } : { query, results: outcome.results });
  }

  private async search(
    endpoint: URL,
    query: string,
    count: number,
    signal: AbortSignal,
  ): Promise<{ results: SearchHit[] } | { error: string }> {
    const url = new URL(endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    const result = await httpGet(url, {
      signal,
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BODY_BYTES,
      headers: { accept: 'application/json' },
    });
    const instance = endpoint.origin;
    if (!result.ok) return { error: `The search at ${instance} failed: ${result.problem}.` };
    const { answer } = result;
    if (answer.status === 403) {
      return {
        error: `The search at ${instance} refused JSON (HTTP 403); its operator must allow the json format (search.formats in SearXNG's settings.yml).`,
      };
    }
    if (answer.status < 200 || answer.status > 299) {
      return { error: `The search at ${instance} answered HTTP ${answer.status}${answer.statusText ? ` ${answer.statusText}` : ''}.` };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(decodeBody(answer.body, answer.charset));
    } catch {
      return { error: `The search at ${instance} did not answer JSON${answer.truncated ? ' (the answer was too large)' : ''}.` };
    }
    return { results: hitsOf(parsed).slice(0, count) };
  }
}

function hitsOf(parsed: unknown): SearchHit[] {
  const results = (parsed as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return [];
  return results.flatMap((item: unknown): SearchHit[] => {
    const { title, url, content } = (item ?? {}) as Record<string, unknown>;
    if (typeof url !== 'string' || url === '') return [];
    const snippet = typeof content === 'string' ? content.replace(/\s+/g, ' ').trim() : '';
    return [
      {
        title: typeof title === 'string' ? title.trim() : url,
        url,
        snippet: snippet.length <= MAX_SNIPPET_CHARS ? snippet : `${snippet.slice(0, MAX_SNIPPET_CHARS - 1)}…`,
      },
    ];
  });
}

/**
 * `search.searxng_url` from config.yaml (a free mapping the config loader does not check):
 * absent means no backend; anything but an http(s) URL is a problem to report.
 */
function searxngUrlFrom(config: AgentConfig): { endpoint: URL } | { problem: string } | { absent: true } {
  const value = config.search?.['searxng_url'];
  if (value === undefined || value === null || value === '') return { absent: true };
  const problem = (why: string) => ({
    problem: `config.yaml: search.searxng_url ${why}; web_search is not offered until it is an http(s) URL such as http://localhost:8888.`,
  });
  if (typeof value !== 'string') return problem('is not a string');
  let base: URL;
  try {
    base = new URL(value.trim());
  } catch {
    return problem(`"${value}" is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') return problem(`"${value}" is not http or https`);
  // The instance may live below a path (https://host/searx); `search` goes below it.
  const directory = base.pathname.endsWith('/') ? base : new URL(`${base.pathname}/`, base);
  return { endpoint: new URL('search', directory) };
}
