import { createHmac } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { freePort } from '../support/freePort.js';
import { errorSentence, inAScratchHomeEachTest, invocations, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { webhookListenerLines } from './configLines.js';

const RULE = 'use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit';

/** A config.yaml whose webhook listener, on 127.0.0.1:`port`, has one route, named `name`. */
function configWithRoute(home: string, name: string, port = 0): Promise<string> {
  return writeHomeFile(
    home,
    'config.yaml',
    [
      'timezone: UTC',
      ...webhookListenerLines(port, 'it-is-a-secret'),
      `        ${JSON.stringify(name)}:`,
      '          prompt: "Event {number}"',
      '',
    ].join('\n'),
  );
}

/** Route and subscription names that cannot name a URL segment and a directory, through the real executable. */
describe('webhook route names, end to end', () => {
  let home: string;
  const running: ChildProcess[] = [];
  inAScratchHomeEachTest((scratch) => (home = scratch));
  afterEach(() => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it.each([
    ['the parent directory', '..'],
    ['a slash', 'a/b'],
    ['65 characters', 's'.repeat(65)],
  ])('agent webhook subscribe refuses %s with one sentence and exit code 1, storing nothing', async (_case, name) => {
    const run = await runAgent(['webhook', 'subscribe', name], { home });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toBe(`error: The name ${JSON.stringify(name)} cannot be used for a subscription: ${RULE}.`);
    expect(existsSync(join(home, 'webhook_subscriptions.json'))).toBe(false);
  });

  it('agent webhook subscribe takes upper case, "-" and "_"', async () => {
    const run = await runAgent(['webhook', 'subscribe', 'Deploy_Hook-2'], { home });

    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Created webhook subscription 'Deploy_Hook-2'.");
  });

  it('agent gateway with a route named ".." exits 1 with one sentence naming the route and the rule', async () => {
    const configFile = await configWithRoute(home, '..');

    const run = await runAgent(['gateway'], { home });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toBe(
      `error: ${configFile}: platforms.webhook.extra.routes has the key "..", which is not a usable route name: ${RULE}.`,
    );
    expect(run.stdout).not.toContain('webhook listening on');
  });

  it('agent config check reports a route named "a/b"', async () => {
    await configWithRoute(home, 'a/b');

    const run = await runAgent(['config', 'check'], { home });

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`platforms.webhook.extra.routes has the key "a/b", which is not a usable route name: ${RULE}.`);
    expect(errorSentence(run)).toMatch(/^error: 1 problem found \(config\.yaml 1 problem; /);
  });

  it('agent gateway skips hand-written subscriptions whose names no route can have, with a warning, and answers them 404', async () => {
    const port = await freePort();
    await configWithRoute(home, 'github', port);
    const long = 's'.repeat(65);
    const entry = { secret: 'sub-secret', deliver: 'log' };
    await writeHomeFile(home, 'webhook_subscriptions.json', JSON.stringify({ '..': entry, 'a/b': entry, [long]: entry }));
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const answers = [];
    for (const path of ['/webhooks/..', '/webhooks/a%2Fb', `/webhooks/${long}`]) answers.push(await postSigned(port, path, 'sub-secret'));

    expect(answers).toEqual(Array(3).fill({ status: 404, body: '{"error":"Unknown route"}' }));
    expect(output()).toContain(`webhook listening on 127.0.0.1:${port} — routes: github\n`);
    for (const name of ['..', 'a/b', long]) {
      expect(output()).toContain(
        `webhook subscriptions: the subscription "${name}" has a name no route can have (${RULE}); it is not served`,
      );
    }
    expect(existsSync(join(home, 'webhooks', 'output'))).toBe(false);
    expect(invocations(home)).toEqual([]);
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
  });
});

/**
 * POSTs a signed event to `path` exactly as written: node:http sends the path as given, where
 * fetch would resolve `..` before sending.
 */
function postSigned(port: number, path: string, secret: string): Promise<{ status: number; body: string }> {
  const body = '{"number":1}';
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': signature },
    });
    req.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
