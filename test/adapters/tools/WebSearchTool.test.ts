import 'reflect-metadata';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { ToolInputError, type ToolCallContext } from '../../../src/application/agent/ports/Tool.js';
import { WebSearchTool } from '../../../src/adapters/tools/WebSearchTool.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { answer, LocalWebServer } from '../../support/localWebServer.js';

const RESULTS = {
  query: 'cron dst',
  results: [
    { title: ' Cron and DST ', url: 'https://a.example/dst', content: 'When clocks\n  change, jobs …', engine: 'x' },
    { title: 'No address' },
    { title: 'Second', url: 'https://b.example/', content: 'b'.repeat(600) },
    { url: 'https://c.example/' },
  ],
};

let web: LocalWebServer;
const context: ToolCallContext = { signal: new AbortController().signal, unattended: false };

beforeAll(async () => {
  web = await LocalWebServer.start({
    '/search': answer(200, 'application/json', JSON.stringify(RESULTS)),
    '/searx/search': answer(200, 'application/json', JSON.stringify({ results: [{ title: 'Below a path', url: 'https://d.example/' }] })),
    '/locked/search': answer(403, 'text/html', 'Forbidden'),
    '/broken/search': answer(200, 'text/html', '<html>not json</html>'),
  });
});

afterAll(() => web.close());

function configWith(search: Record<string, unknown> | undefined): AgentConfig {
  return {
    providers: {},
    fallback_providers: [],
    platforms: {},
    cron: {} as AgentConfig['cron'],
    gateway: { shutdown_grace_seconds: 30 },
    search,
  };
}

function toolFor(searxngUrl: unknown, log = new RecordingLogger()): WebSearchTool {
  return new WebSearchTool(configWith(searxngUrl === undefined ? undefined : { searxng_url: searxngUrl }), log);
}

async function search(tool: WebSearchTool, args: Record<string, unknown>) {
  return JSON.parse(await tool.call(args, context));
}

describe('WebSearchTool', () => {
  it('asks SearXNG for JSON and returns the top results with title, url and snippet', async () => {
    const result = await search(toolFor(web.url('/')), { query: 'cron dst', max_results: 2 });

    expect(result).toEqual({
      query: 'cron dst',
      results: [
        { title: 'Cron and DST', url: 'https://a.example/dst', snippet: 'When clocks change, jobs …' },
        { title: 'Second', url: 'https://b.example/', snippet: `${'b'.repeat(499)}…` },
      ],
    });
    const sent = new URL(web.requests.at(-1)!.url!, 'http://x');
    expect(sent.pathname).toBe('/search');
    expect(Object.fromEntries(sent.searchParams)).toEqual({ q: 'cron dst', format: 'json' });
  });

  it('returns five results by default and skips results without an address', async () => {
    const result = await search(toolFor(web.url('')), { query: 'q' });

    expect(result.results.map((hit: { url: string }) => hit.url)).toEqual([
      'https://a.example/dst',
      'https://b.example/',
      'https://c.example/',
    ]);
    expect(result.results[2].title).toBe('https://c.example/');
  });

  it('works with an instance that lives below a path', async () => {
    const result = await search(toolFor(web.url('/searx')), { query: 'q' });

    expect(result.results).toEqual([{ title: 'Below a path', url: 'https://d.example/', snippet: '' }]);
  });

  it('says how to fix an instance that refuses JSON', async () => {
    const result = await search(toolFor(web.url('/locked/')), { query: 'q' });

    expect(result).toEqual({ query: 'q', error: expect.stringMatching(/refused JSON \(HTTP 403\).*search\.formats/) });
  });

  it('reports an answer that is not JSON as an error result', async () => {
    const result = await search(toolFor(web.url('/broken')), { query: 'q' });

    expect(result.error).toMatch(/did not answer JSON/);
  });

  it('is available only when search.searxng_url is configured', () => {
    expect(toolFor(web.url('/')).isAvailable()).toBe(true);
    expect(toolFor(undefined).isAvailable()).toBe(false);
    expect(new WebSearchTool(configWith({}), new RecordingLogger()).isAvailable()).toBe(false);
  });

  it.each([['ftp://search.example'], ['not a url'], [42]])('is not available, with a warning, for searxng_url %j', (value) => {
    const log = new RecordingLogger();

    expect(toolFor(value, log).isAvailable()).toBe(false);
    expect(log.entries).toEqual([
      {
        level: 'warn',
        message: expect.stringMatching(/^config\.yaml: search\.searxng_url .*web_search is not offered/),
        fields: undefined,
      },
    ]);
  });

  it.each([
    [{}, /needs "query"/],
    [{ query: 'q', max_results: 0 }, /between 1 and 20/],
    [{ query: 'q', max_results: 2.5 }, /"max_results" must be a whole number/],
    [{ q: 'x' }, /no argument "q"/],
  ])('refuses %j with a ToolInputError', async (args, message) => {
    const call = toolFor(web.url('/')).call(args, context);

    await expect(call).rejects.toThrow(ToolInputError);
    await expect(call).rejects.toThrow(message);
  });
});
