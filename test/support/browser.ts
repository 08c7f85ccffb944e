import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** The browser the tests drive: the chromium package, which .ci/run installs with apt-get when it is missing. */
export const BROWSER_PATH = '/usr/bin/chromium';

/**
 * Where `screenshot()` saves by default: the images the docs show when the tests are run by
 * `npm run screenshots` (AGENT_DOCS_SCREENSHOTS=1), else a directory of the machine's temporary
 * files, so that a test run leaves the working tree as it found it.
 */
export const SCREENSHOT_DIR =
  process.env.AGENT_DOCS_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/images', import.meta.url))
    : join(tmpdir(), 'agent-test-screenshots');

/** Whether the browser is installed on this machine. */
export function browserAvailable(): boolean {
  return existsSync(BROWSER_PATH);
}

/**
 * `describe` when the browser is installed; otherwise `describe.skip`, with the reason in the title
 * (as the Docker and hadolint tests do) and a note on the console, so that a machine without it skips
 * the suite instead of failing it.
 */
export function describeInBrowser(name: string, fn: () => void): void {
  if (browserAvailable()) {
    describe(name, fn);
    return;
  }
  const reason = `${BROWSER_PATH} is not installed`;
  console.warn(`Skipping "${name}": ${reason} (apt-get install chromium).`);
  // Skipped only where chromium is not installed (the reason is in the title): there is no browser to drive then.
  describe.skip(`${name} (skipped: ${reason})`, fn);
}

/** A running browser with a profile of its own; `close()` ends it and removes the profile. */
export interface TestBrowser {
  readonly context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Starts the browser headless with a fresh profile in a temporary directory. Playwright refuses a
 * `--user-data-dir` argument, so the profile is given to `launchPersistentContext`, which returns the
 * browser's one context.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'agent-browser-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: BROWSER_PATH,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    context,
    newPage: () => context.newPage(),
    close: () => (closed ??= context.close().finally(() => rm(profile, { recursive: true, force: true }))),
  };
}

/**
 * Saves a PNG of the page as `<name>.png` in `directory` (by default docs/images, for the docs),
 * creating the directory; the whole page, not only what the window shows; returns the file's path.
 */
export async function screenshot(page: Page, name: string, directory = SCREENSHOT_DIR): Promise<string> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) {
    throw new Error(`A screenshot's name is lower-case letters, digits and dashes, not ${JSON.stringify(name)}.`);
  }
  await mkdir(directory, { recursive: true });
  const path = join(directory, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
