import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { FakeTelegramServer, TELEGRAM_TOKEN } from '../support/platforms/FakeTelegramServer.js';
import {
  createJob,
  errorSentence,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  startAgent,
  storedJob,
  writeHomeFile,
} from './agentCli.js';

function yamlSection(platform: string, settings: Record<string, string>): string {
  return [`  ${platform}:`, ...Object.entries(settings).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`)].join('\n');
}

/** Delivery to chat platforms through the real executable, against local servers that speak their APIs. */
describe('delivery to chat platforms, end to end', () => {
  let telegram: FakeTelegramServer;
  let slack: FakeSlackServer;
  let home: string;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    telegram = await FakeTelegramServer.start();
    slack = await FakeSlackServer.start();
    home = await makeAgentHome({
      extraConfig: ['platforms:', yamlSection('telegram', telegram.settings), yamlSection('slack', slack.settings)].join('\n'),
    });
  });

  afterEach(async () => {
    for (const child of running.splice(0)) child.kill('SIGKILL');
    await telegram.close();
    await slack.close();
    await removeAgentHome(home);
  });

  it('agent cron run delivers the wrapped answer to a telegram chat and records ok', async () => {
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'builds', '--deliver', 'telegram:-1001234567890:17']);

    const run = await runAgent(['cron', 'run', 'builds'], { home });

    expect(run.code).toBe(0);
    expect(telegram.delivered).toHaveLength(1);
    expect(telegram.delivered[0]).toContain('Cronjob Response: builds');
    expect(telegram.delivered[0]).toContain('Answer to: ');
    expect(telegram.sends[0]!.body).toMatchObject({ chat_id: '-1001234567890', message_thread_id: 17 });
    expect(storedJob(home, id)).toMatchObject({ last_status: 'ok', last_delivery_error: null });
  });

  it('agent cron run records delivery_failed, one line per failed target, when the platform refuses', async () => {
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'builds', '--deliver', 'telegram:-404,slack']);

    const run = await runAgent(['cron', 'run', 'builds'], { home });

    expect(run.code).not.toBe(0);
    expect(slack.delivered).toHaveLength(1);
    expect(storedJob(home, id)).toMatchObject({
      last_status: 'delivery_failed',
      last_delivery_error: 'telegram:-404: telegram refused the message (HTTP 400: Bad Request: chat not found)',
    });
  });

  it('agent cron run keeps the NULs and escape sequences of a garbage answer out of last_delivery_error, the report and stderr', async () => {
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'builds', '--deliver', 'telegram:-1001234567890']);
    telegram.answerNextRequest((request) => request.path.endsWith('/sendMessage'), {
      status: 400,
      text: 'garbage\u0000\u0000 \u001b[31mred\u001b[0m \u001b]0;pwned\u0007 \u009b2J',
    });

    const run = await runAgent(['cron', 'run', 'builds'], { home });

    expect(run.code).not.toBe(0);
    const error = storedJob(home, id).last_delivery_error!;
    expect(error).toBe(
      'telegram:-1001234567890: telegram refused the message (HTTP 400: garbage\\u0000\\u0000 \\u001b[31mred\\u001b[0m \\u001b]0;pwned\\u0007 \\u009b2J)',
    );
    const reports = join(home, 'cron', 'output', id);
    const [report] = readdirSync(reports);
    const content = readFileSync(join(reports, report!), 'utf8');
    expect(content).toContain(`- Delivery error: ${error}`);
    for (const text of [error, content, run.stdout, run.stderr]) expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('agent cron run refuses a target on a platform that is not configured, spending nothing', async () => {
    const id = await createJob(home, ['every 1h', 'Check the build', '--name', 'builds', '--deliver', 'discord:123456789012345678']);

    await runAgent(['cron', 'run', 'builds'], { home });

    expect(storedJob(home, id)).toMatchObject({ last_status: 'blocked_config' });
    expect(storedJob(home, id).last_error).toContain('platforms.discord.bot_token (or DISCORD_BOT_TOKEN)');
  });

  it('agent send delivers text and stdin, and prints what the platform confirmed', async () => {
    const byArgument = await runAgent(['send', 'telegram', 'Deploy', 'finished'], { home });
    expect(byArgument).toMatchObject({ code: 0, stderr: '' });
    expect(byArgument.stdout).toBe('Delivered to telegram (-1001234567890): message 1.\n');

    const byStdin = await runAgent(['send', 'slack:C0ALERTS01', '-'], { home, input: 'from a pipe\n' });
    expect(byStdin.code).toBe(0);
    expect(slack.delivered).toEqual(['from a pipe\n']);
    expect(telegram.delivered).toEqual(['Deploy finished']);
  });

  it('agent send splits 100,000 characters into numbered parts that all arrive', async () => {
    const text = 'All systems nominal. '.repeat(5000);
    const run = await runAgent(['send', 'telegram:-1001234567890', '-'], { home, input: text });
    expect(run.code).toBe(0);
    const count = telegram.delivered.length;
    expect(count).toBeGreaterThanOrEqual(25);
    expect(run.stdout).toContain(`${count} parts`);
    telegram.delivered.forEach((part, index) => {
      expect(part.length).toBeLessThanOrEqual(4096);
      expect(part.endsWith(` (${index + 1}/${count})`)).toBe(true);
    });
  });

  it('agent send reads a credential from the file its _FILE variable names, and refuses a file it cannot read', async () => {
    const secret = await writeHomeFile(home, 'secrets/telegram', 'wrong-token-from-a-file\n');
    const fromFile = await runAgent(['send', 'telegram', 'hello'], { home, env: { TELEGRAM_BOT_TOKEN_FILE: secret } });
    expect(fromFile.code).toBe(1);
    expect(errorSentence(fromFile)).toContain('telegram refused the credentials (HTTP 401: Unauthorized)');
    expect(telegram.delivered).toEqual([]);

    const missing = await runAgent(['send', 'telegram', 'hello'], {
      home,
      env: { TELEGRAM_BOT_TOKEN_FILE: join(home, 'secrets', 'gone') },
    });
    expect(missing.code).not.toBe(0);
    expect(errorSentence(missing)).toBe(
      `error: TELEGRAM_BOT_TOKEN_FILE names ${join(home, 'secrets', 'gone')}, which cannot be read (ENOENT); point it at the file that holds the secret, readable by this user.`,
    );
    const both = await runAgent(['send', 'telegram', 'hello'], { home, env: { TELEGRAM_BOT_TOKEN_FILE: secret, TELEGRAM_BOT_TOKEN: 'x' } });
    expect(errorSentence(both)).toMatch(/^error: Both TELEGRAM_BOT_TOKEN and TELEGRAM_BOT_TOKEN_FILE are set; set only one of them/);
  });

  it('agent send fails with one sentence naming the platform and what to check when the token is refused', async () => {
    const run = await runAgent(['send', 'telegram', 'hello'], { home, env: { TELEGRAM_BOT_TOKEN: 'wrong-token' } });
    expect(run.code).toBe(1);
    expect(errorSentence(run)).toBe(
      'error: Delivery failed to telegram: telegram refused the credentials (HTTP 401: Unauthorized); check platforms.telegram.bot_token (or TELEGRAM_BOT_TOKEN)',
    );
    expect(run.stderr).not.toContain('wrong-token');
    expect(run.stderr).not.toContain(TELEGRAM_TOKEN);
  });

  it('agent send refuses an unconfigured platform, a destination the platform cannot address and an unknown named channel with one sentence each', async () => {
    const unconfigured = await runAgent(['send', 'matrix:!room:example.org', 'hello'], { home });
    expect(unconfigured.code).toBe(1);
    expect(errorSentence(unconfigured)).toMatch(/"matrix" is not configured: set platforms\.matrix\.homeserver \(or MATRIX_HOMESERVER\)/);

    const unaddressable = await runAgent(['send', 'telegram:general-chat', 'hello'], { home });
    expect(unaddressable.code).toBe(1);
    expect(errorSentence(unaddressable)).toBe('error: Delivery target "telegram:general-chat" is not a valid telegram destination.');

    const unknown = await runAgent(['send', 'slack:#nowhere', 'hello'], { home });
    expect(unknown.code).toBe(1);
    expect(errorSentence(unknown)).toContain('"#nowhere" is unknown; run "agent channels list --refresh"');
    expect(slack.delivered).toEqual([]);
  });

  it('agent platforms and agent channels list show what is configured and what the platforms listed', async () => {
    const platforms = await runAgent(['platforms'], { home });
    expect(platforms.code).toBe(0);
    expect(platforms.stdout).toMatch(/^telegram +configured +-1001234567890:17$/m);
    expect(platforms.stdout).toMatch(/^discord +missing bot_token \(DISCORD_BOT_TOKEN\) +-$/m);
    expect(platforms.stdout).not.toContain(TELEGRAM_TOKEN);

    const channels = await runAgent(['channels', 'list', '--refresh', '--platform', 'slack'], { home });
    expect(channels.code).toBe(0);
    expect(channels.stdout).toMatch(/^slack +#general +C0HOME0001 +listed$/m);
    expect(channels.stdout).toMatch(/^slack +#alerts +C0ALERTS01 +listed$/m);

    const send = await runAgent(['send', 'slack:#general', 'hello general'], { home });
    expect(send.stdout).toBe('Delivered to slack:#general (C0HOME0001): message 1712345679.000100.\n');
  });

  it('a running gateway delivers the answer to a signed webhook event to slack', async () => {
    const port = await freePort();
    const extra = [
      'platforms:',
      yamlSection('slack', slack.settings),
      '  webhook:',
      '    enabled: true',
      '    extra:',
      '      host: 127.0.0.1',
      `      port: ${port}`,
      '      secret: hook-secret',
      '      routes:',
      '        github:',
      '          events: [pull_request]',
      '          prompt: "Review PR #{number}"',
      '          deliver: slack',
      '          deliver_extra: {chat_id: "{channel}", thread_id: "{thread}"}',
    ].join('\n');
    await removeAgentHome(home);
    home = await makeAgentHome({ extraConfig: extra });
    const gateway = startAgent(['gateway'], { home });
    running.push(gateway);
    let output = '';
    gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    gateway.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    expect(await eventually(() => output.includes('webhook listening on'), 10_000)).toBe(true);

    const body = JSON.stringify({ number: 7, channel: 'C0ALERTS01', thread: '1700000000.000100' });
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': 'd-1',
        'x-hub-signature-256': await sign('hook-secret', body),
      },
      body,
    });
    expect(response.status).toBe(202);

    expect(await eventually(() => slack.delivered.length === 1, 15_000)).toBe(true);
    expect(slack.delivered[0]).toContain('Review PR #7');
    expect(slack.sends[0]!.body).toMatchObject({ channel: 'C0ALERTS01', thread_ts: '1700000000.000100' });
  });
});
