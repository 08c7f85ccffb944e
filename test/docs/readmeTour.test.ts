import { spawnSync } from 'node:child_process';
import { spawn } from '../support/testProcesses.js';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireBuiltAgent } from '../e2e/agentCli.js';
import type { FakeAnswer, RecordedRequest } from '../support/platforms/FakePlatformServer.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The sections of README.md whose sh blocks are commands a user types on a fresh home, in order:
 * the tour of `agent cron` (steps 1 to 7), webhooks (the gateway started in the background, sent
 * events, runs listed, an answer delivered again, the gateway stopped) and `agent chat -q`.
 * Left out: the first block (`npm ci && npm start|test`, which installs and would run this very
 * suite) and the dashboard section, whose block is YAML, not commands.
 */
const TOUR_SECTIONS = ['## A five-minute tour of `agent cron`', '## Turn webhooks into runs', '## Ask it something'];

/** The sh blocks of `section` in README.md, in order. */
function shBlocks(readme: string, section: string): string[] {
  const start = readme.indexOf(`${section}\n`);
  if (start < 0) throw new Error(`README.md has no section "${section}"`);
  const next = readme.indexOf('\n## ', start + section.length);
  const body = readme.slice(start, next < 0 ? undefined : next);
  return [...body.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** Telegram's Bot API for whatever token the tour exports (`123456789:AAE…`, which no real bot has). */
class AnyTokenTelegram extends FakeTelegramServer {
  protected override confirm(request: RecordedRequest, messageId: string): FakeAnswer {
    return {
      status: 200,
      json: { ok: true, result: { message_id: Number(messageId), chat: { id: request.body.chat_id }, text: request.body.text } },
    };
  }

  protected override other(request: RecordedRequest): FakeAnswer {
    if (!/^\/bot[^/]+\/getMe$/.test(request.path)) return { status: 404, json: { ok: false, error_code: 404, description: 'Not Found' } };
    return { status: 200, json: { ok: true, result: { id: 123456789, is_bot: true, first_name: 'Tour', username: 'tour_bot' } } };
  }
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The README tour, word for word, as a test: its sh blocks run in order in one bash, from the
 * repository's root (the tour's `alias agent="node $PWD/dist/agent.js"` needs it), on a fresh
 * home (the tour's own `mktemp -d`), with `set -e` so that every command must exit 0. What
 * cannot be real is pointed elsewhere through settings the product reads anyway: Telegram's API
 * (TELEGRAM_BASE_URL) is a local fake that takes any token.
 */
describe('the README tour', () => {
  let scratch: string;
  let telegram: AnyTokenTelegram;
  let tour: ReturnType<typeof spawn> | null = null;

  beforeAll(() => requireBuiltAgent());
  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'agent-readme-tour-'));
    telegram = await new AnyTokenTelegram().start();
  });
  afterEach(async () => {
    // bash leads its own process group, with the gateway the tour starts in the background.
    if (tour?.pid !== undefined) {
      try {
        process.kill(-tour.pid, 'SIGKILL');
      } catch {
        // Every process of the group has ended.
      }
    }
    tour = null;
    await telegram.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('runs every command of the tour, the webhooks and chat on a fresh home, each exiting 0', async () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    for (const date of readme.matchAll(/agent cron add "(\d{4}-\d\d-\d\dT\d\d:\d\d)"/g)) {
      expect({ oneShotInTheTour: date[1], inTheFuture: Date.parse(`${date[1]}Z`) > Date.now() + 86_400_000 }).toEqual({
        oneShotInTheTour: date[1],
        inTheFuture: true,
      });
    }
    // The webhooks section signs its request with openssl and sends it with curl, as a user would.
    for (const tool of ['openssl', 'curl'])
      expect({ tool, onPath: spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0 }).toEqual({ tool, onPath: true });
    const blocks = TOUR_SECTIONS.flatMap((section) => shBlocks(readme, section));
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    // The webhooks section listens on 8644 as written; a gateway of your own there would answer instead.
    expect({ port: 8644, free: await portIsFree(8644) }).toEqual({ port: 8644, free: true });

    const script = join(scratch, 'tour.sh');
    await writeFile(
      script,
      [
        'set -eo pipefail',
        'shopt -s expand_aliases',
        `trap 'echo "README tour: this command exited $?: $BASH_COMMAND" >&2' ERR`,
        ...blocks,
      ].join('\n'),
    );
    tour = spawn('bash', [script], {
      cwd: REPO,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: scratch,
        TMPDIR: scratch,
        LANG: 'C.UTF-8',
        TELEGRAM_BASE_URL: telegram.url,
      },
    });
    let stdout = '';
    let stderr = '';
    tour.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    tour.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => tour!.once('close', (exit) => resolve(exit)));

    expect({ code, stderr: stderr.split('\n').filter((line) => line.startsWith('README tour:') || line.startsWith('error:')) }).toEqual({
      code: 0,
      stderr: [],
    });
    // What the tour says each step shows.
    expect(stdout).toMatch(/^telegram +configured /m);
    expect(stdout).toMatch(/Created job [0-9a-f]{12} 'digest'/);
    expect(stdout).toMatch(/Ran job [0-9a-f]{12} 'digest': ok/);
    expect(stdout).toContain('{"status":"accepted","route":"pushes","event":"push"');
    expect(stdout).toMatch(
      /Delivered the answer of webhook run \S+ \(route 'pushes'\) again to the log: it is in the gateway log \(process \d+\)\./,
    );
    // The grep of the gateway's log: the two events' answers, then the one delivered again.
    expect(stdout.split('\n').filter((line) => line.includes("info webhook answer on route 'pushes'"))).toHaveLength(3);
    // The Telegram steps reached Telegram: the hello, the digest's answer, and that answer again.
    expect(telegram.delivered[0]).toBe('Hello from agent');
    expect(telegram.delivered.filter((text) => text.includes('Cronjob Response: digest'))).toHaveLength(2);
  }, 240_000);
});
