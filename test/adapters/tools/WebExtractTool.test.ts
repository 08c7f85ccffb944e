import 'reflect-metadata';
import { createServer } from 'node:net';
import { ToolInputError, type ToolCallContext } from '../../../src/application/agent/ports/Tool.js';
import { WebExtractTool } from '../../../src/adapters/tools/WebExtractTool.js';
import { publicAddressesOnly } from '../../../src/adapters/tools/publicAddresses.js';
import { answer, LocalWebServer } from '../../support/localWebServer.js';

const PAGE = `<!doctype html>
<html>
<head><title>Release notes &amp; more</title><style>body { color: red }</style></head>
<body>
  <header>Site header</header>
  <nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
  <main>
    <h1>Version 2.0</h1>
    <p>Read the <a href="https://example.com/guide">upgrade guide</a> first. <img src="chart.png" alt="a chart"></p>
    <ul><li>Faster ticks</li><li>Fewer locks</li></ul>
  </main>
  <script>console.log('tracking')</script>
  <footer>Copyright</footer>
</body>
</html>`;

let web: LocalWebServer;
const tool = new WebExtractTool(publicAddressesOnly);

function context(signal = new AbortController().signal): ToolCallContext {
  return { signal, unattended: true };
}

/** The context of a webhook run whose route does not allow private networks. */
const publicOnly = (): ToolCallContext => ({ ...context(), privateNetworks: false });
const REFUSAL_HINT = 'Runs started by a webhook fetch only public addresses (a route allows more with allow_private_networks: true).';

beforeAll(async () => {
  web = await LocalWebServer.start({
    '/page.html': answer(200, 'text/html; charset=utf-8', PAGE),
    '/moved': (_request, response) => response.writeHead(302, { location: '/page.html' }).end(),
    '/to-other-loopback': (request, response) =>
      response.writeHead(302, { location: `http://127.0.0.2:${request.socket.localPort}/page.html` }).end(),
    '/notes.txt': answer(200, 'text/plain', '  line one\nline two\n'),
    '/data.json': answer(200, 'application/json', '{"a":1,"b":[true,null]}'),
    '/latin1': answer(200, 'text/plain; charset=iso-8859-1', Buffer.from([0x63, 0x61, 0x66, 0xe9])),
    '/untyped': answer(200, null, '<html><body><p>No type given</p></body></html>'),
    '/picture.png': answer(200, 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47])),
    '/gone': answer(404, 'text/html', '<p>missing</p>'),
    '/long.txt': answer(200, 'text/plain', 'x'.repeat(30_000)),
    '/endless': (_request, response) => {
      // Writes for as long as anyone reads: only the byte cap ends this page.
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const more = () => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on('drain', more);
      more();
    },
    '/never': () => {
      // Never answers.
    },
  });
});

afterAll(() => web.close());

describe('WebExtractTool', () => {
  it('turns HTML into readable text under the final URL and the title, without page furniture', async () => {
    const text = await tool.call({ url: web.url('/page.html') }, context());

    expect(text).toBe(
      [
        `URL: ${web.url('/page.html')}`,
        'Title: Release notes & more',
        '',
        'Version 2.0',
        '',
        'Read the upgrade guide first.',
        '',
        ' * Faster ticks',
        ' * Fewer locks',
      ].join('\n'),
    );
  });

  it('names the URL it ended at after a redirect', async () => {
    const text = await tool.call({ url: web.url('/moved') }, context());

    expect(text.split('\n')[0]).toBe(`URL: ${web.url('/page.html')}`);
  });

  it('returns plain text as it is, JSON pretty-printed, in the declared charset', async () => {
    expect(await tool.call({ url: web.url('/notes.txt') }, context())).toBe(`URL: ${web.url('/notes.txt')}\n\nline one\nline two`);
    expect(await tool.call({ url: web.url('/data.json') }, context())).toBe(
      `URL: ${web.url('/data.json')}\n\n${JSON.stringify({ a: 1, b: [true, null] }, null, 2)}`,
    );
    expect(await tool.call({ url: web.url('/latin1') }, context())).toMatch(/café$/);
  });

  it('reads a page without a content type as HTML when it looks like HTML', async () => {
    expect(await tool.call({ url: web.url('/untyped') }, context())).toBe(`URL: ${web.url('/untyped')}\n\nNo type given`);
  });

  it('says when it cannot turn a page into text', async () => {
    expect(await tool.call({ url: web.url('/picture.png') }, context())).toBe(
      `${web.url('/picture.png')} is image/png, which web_extract cannot turn into text.`,
    );
  });

  it('cuts long text and says where', async () => {
    const text = await tool.call({ url: web.url('/long.txt') }, context());

    expect(text).toContain('x'.repeat(20_000));
    expect(text).not.toContain('x'.repeat(20_001));
    expect(text.endsWith('[The text was cut at 20,000 of its 30,000 characters.]')).toBe(true);
  });

  it('stops reading a body at 2 MB', async () => {
    const text = await tool.call({ url: web.url('/endless') }, context());

    expect(text).toContain('[The page is larger than 2 MB; only its first 2 MB were read.]');
  });

  it('answers a non-2xx status with the status and the URL, not a throw', async () => {
    expect(await tool.call({ url: web.url('/gone') }, context())).toBe(
      `Could not fetch ${web.url('/gone')}: the server answered HTTP 404 Not Found.`,
    );
  });

  it('answers a refused connection with what went wrong', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/`;

    expect(await tool.call({ url }, context())).toMatch(new RegExp(`^Could not fetch ${url}: .*ECONNREFUSED`));
  });

  it('gives up when the run is cancelled', async () => {
    const controller = new AbortController();
    const pending = tool.call({ url: web.url('/never') }, context(controller.signal));
    // Cancel once the server has the request, so the fetch is really in flight.
    await until(() => web.requests.some((request) => request.url === '/never'));

    controller.abort();

    expect(await pending).toBe(`Could not fetch ${web.url('/never')}: the run was cancelled.`);
  });

  describe('in a run that may not reach private networks (webhook runs)', () => {
    const requestsTo = (path: string) => web.requests.filter((request) => request.url === path).length;

    it.each([
      ['loopback', () => web.url('/page.html'), '127.0.0.1'],
      ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      ['private network', () => 'http://10.0.0.8:8080/admin', '10.0.0.8'],
      ['IPv6 loopback', () => 'http://[::1]:9/', '::1'],
      ['loopback inside an IPv4-compatible IPv6', () => 'http://[::127.0.0.1]/', '::7f00:1'],
      ['cloud metadata inside an IPv4-compatible IPv6', () => 'http://[::a9fe:a9fe]/latest/meta-data/', '::a9fe:a9fe'],
    ])('refuses a %s address without connecting, and says why', async (_kind, url, address) => {
      const before = requestsTo('/page.html');

      expect(await tool.call({ url: url() }, publicOnly())).toBe(
        `Could not fetch ${new URL(url()).href}: ${address} is a loopback, private or otherwise non-public address. ${REFUSAL_HINT}`,
      );
      expect(requestsTo('/page.html')).toBe(before);
    });

    it('refuses a name that resolves to a non-public address, checked when it connects', async () => {
      const url = web.url('/page.html').replace('127.0.0.1', 'localhost');
      const before = requestsTo('/page.html');

      expect(await tool.call({ url }, publicOnly())).toMatch(
        new RegExp(
          `^Could not fetch ${url}: localhost resolves to (127\\.0\\.0\\.1|::1), a loopback, private or otherwise non-public address\\. `,
        ),
      );
      expect(requestsTo('/page.html')).toBe(before);
    });

    it('checks every address a redirect leads to', async () => {
      const testServerOnly = new WebExtractTool((address) => address === '127.0.0.1');

      expect((await testServerOnly.call({ url: web.url('/moved') }, publicOnly())).split('\n')[0]).toBe(`URL: ${web.url('/page.html')}`);
      expect(await testServerOnly.call({ url: web.url('/to-other-loopback') }, publicOnly())).toBe(
        `Could not fetch ${web.url('/to-other-loopback')}: 127.0.0.2 is a loopback, private or otherwise non-public address. ${REFUSAL_HINT}`,
      );
    });

    it('reaches private addresses as before in other runs', async () => {
      expect(await tool.call({ url: web.url('/notes.txt') }, { ...context(), privateNetworks: true })).toBe(
        `URL: ${web.url('/notes.txt')}\n\nline one\nline two`,
      );
    });
  });

  it.each([
    ['file:///etc/passwd', /only http and https URLs, not file/],
    ['ftp://example.com/x', /only http and https URLs, not ftp/],
    ['example.com', /is not a URL/],
  ])('refuses %s with a ToolInputError', async (url, message) => {
    const call = tool.call({ url }, context());

    await expect(call).rejects.toThrow(ToolInputError);
    await expect(call).rejects.toThrow(message);
  });
});

/** A port that nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
