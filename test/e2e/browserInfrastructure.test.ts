import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describeInBrowser, launchBrowser, screenshot, type TestBrowser } from '../support/browser.js';
import { LocalWebServer } from '../support/localWebServer.js';

const TOKEN = 'correct-horse-battery';
/** Text the server shows on the page it answers a sign-in with, as a name someone gave a job. */
const INJECTED = '<script>alert("script")</script><img src="/missing.png" onerror="alert(\'img\')">';

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const html = (body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test</title></head><body>${body}</body></html>`;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describeInBrowser('the browser the tests drive', () => {
  const posted: string[] = [];
  let server: LocalWebServer;
  let browser: TestBrowser;
  let page: Page;
  let dialogs: string[];

  beforeAll(async () => {
    server = await LocalWebServer.start({
      '/': (_request, response) => {
        response
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            html(
              '<form method="post" action="/signed-in">' +
                '<label for="t">Token</label><input id="t" name="token" type="password">' +
                '<button>Sign in</button></form>',
            ),
          );
      },
      '/signed-in': (request, response) => {
        void readBody(request).then((body) => {
          const token = new URLSearchParams(body).get('token') ?? '';
          posted.push(token);
          const content =
            token === TOKEN ? `<h1>Signed in</h1><p>Last job: <span id="job">${escapeHtml(INJECTED)}</span></p>` : '<h1>Wrong token</h1>';
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html(content));
        });
      },
      // The same text left unescaped: proves that the dialog listener sees an injected alert.
      '/unescaped': (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html(`<p>Last job: ${INJECTED}</p>`));
      },
    });
    browser = await launchBrowser();
  }, 120_000);

  // A page of its own for each test, which records the message of every dialog it opens.
  beforeEach(async () => {
    page = await browser.newPage();
    const seen: string[] = [];
    dialogs = seen;
    page.on('dialog', (dialog) => {
      seen.push(dialog.message());
      void dialog.dismiss();
    });
  });

  afterEach(async () => {
    await page?.close();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in through a labelled form and shows text the server escaped as text, running none of it', async () => {
    await page.goto(server.url('/'));
    await page.getByLabel('Token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(server.url('/signed-in'));

    await page.getByRole('heading', { name: 'Signed in' }).waitFor();
    expect(posted).toEqual([TOKEN]);
    expect(dialogs).toEqual([]);
    expect(await page.locator('#job').textContent()).toBe(INJECTED);
  }, 240_000);

  it('sees the alert when the same text is not escaped', async () => {
    // goto waits for the load event, which waits for the broken image whose onerror alerts.
    await page.goto(server.url('/unescaped'));

    expect(dialogs).toEqual(['script', 'img']);
  }, 240_000);

  it('saves a screenshot as a PNG', async () => {
    await page.goto(server.url('/'));
    const directory = await mkdtemp(join(tmpdir(), 'agent-screenshot-'));
    try {
      const path = await screenshot(page, 'sign-in', directory);

      expect(path).toBe(join(directory, 'sign-in.png'));
      expect((await readFile(path)).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 240_000);
});
