import { createHmac } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { errorSentence, inAScratchHomeEachTest, invocations, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { commandModelLines, webhookListenerLines } from './configLines.js';

const SECRET = 'it-is-a-secret';
const KNOWN = 'the known ones are cronjob, terminal, web, web_search, web_extract, clarify, vision, agent-cron, agent-chat, agent-webhook';

/** config.yaml with the stand-in model and a listener on 127.0.0.1:`port` whose route `github` has `routeLines`. */
function configWith(home: string, port: number, routeLines: string[], more: string[] = []): Promise<string> {
  return writeHomeFile(
    home,
    'config.yaml',
    [
      'timezone: UTC',
      ...commandModelLines([process.execPath, `${home}/model.mjs`]),
      ...webhookListenerLines(port, SECRET),
      '        github:',
      ...routeLines.map((line) => `          ${line}`),
      ...more,
      '',
    ].join('\n'),
  );
}

/** POSTs `body` as sent, signed over those bytes, with the headers given (none added). */
async function post(port: number, body: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`http://127.0.0.1:${port}/webhooks/github`, {
    method: 'POST',
    headers: { 'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`, ...headers },
    body: Buffer.from(body),
  });
  return { status: response.status, body: await response.json() };
}

/** Toolset names looked up as own entries, and bodies read by their Content-Type, through the real executable. */
describe('webhook names and types, end to end', () => {
  let home: string;
  const running: ChildProcess[] = [];
  inAScratchHomeEachTest((scratch) => (home = scratch));
  afterEach(() => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it.each([
    ['[constructor]', 'constructor'],
    ['[toString, web]', 'toString'],
    ['[web, __proto__]', '__proto__'],
    ['[hasOwnProperty]', 'hasOwnProperty'],
  ])('agent config check refuses toolsets: %s on a route, listing the known toolsets', async (list, unknown) => {
    const configFile = await configWith(home, 0, [`toolsets: ${list}`]);

    const run = await runAgent(['config', 'check'], { home });

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `${configFile}: platforms.webhook.extra.routes.github.toolsets names an unknown toolset "${unknown}"; ${KNOWN}.`,
    );
    expect(errorSentence(run)).toMatch(/^error: 1 problem found \(config\.yaml 1 problem; /);
  });

  it("agent config check refuses a chat platform's toolsets: [constructor], listing the known toolsets", async () => {
    await configWith(home, 0, [], ['  telegram:', '    bot_token: "123:abc"', '    toolsets: [constructor]']);

    const run = await runAgent(['config', 'check'], { home });

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`platforms.telegram.toolsets names an unknown toolset "constructor"; ${KNOWN}.`);
  });

  it('agent gateway refuses to start with toolsets: [constructor], in one sentence listing the known toolsets', async () => {
    const configFile = await configWith(home, await freePort(), ['toolsets: [constructor]']);

    const run = await runAgent(['gateway'], { home });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toBe(
      `error: ${configFile}: platforms.webhook.extra.routes.github.toolsets names an unknown toolset "constructor"; ${KNOWN}.`,
    );
    expect(run.stdout).not.toContain('webhook listening on');
  });

  it("agent gateway takes the first code host's signed form-encoded delivery and runs it; other types get 415", async () => {
    const port = await freePort();
    await configWith(home, port, ['events: [pull_request]', 'prompt: "Review PR #{number}: {pull_request.title}"']);
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);
    const payload = JSON.stringify({ action: 'opened', number: 42, pull_request: { title: 'Fix a + b & c = 100%' } });
    // As the host sends it: the JSON form-encoded under `payload`, spaces as "+", signed as sent.
    const form = new URLSearchParams({ payload }).toString();

    const accepted = await post(port, form, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-github-event': 'pull_request',
      'x-github-delivery': 'form-1',
    });
    const plain = await post(port, payload, { 'content-type': 'text/plain' });
    const none = await post(port, payload, {});

    expect(accepted).toEqual({ status: 202, body: { status: 'accepted', route: 'github', event: 'pull_request', delivery_id: 'form-1' } });
    expect(await eventually(() => output().includes('Answer to: Review PR #42: Fix a + b & c = 100%'), 20_000)).toBe(true);
    expect(plain.status).toBe(415);
    expect(plain.body).toEqual({
      error:
        'Content-Type "text/plain" is not taken here; send application/json, application/*+json or application/x-www-form-urlencoded (a form may carry the JSON in its payload field).',
    });
    expect(none.status).toBe(415);
    expect(invocations(home)).toEqual(['Review PR #42: Fix a + b & c = 100%']);
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
  });

  it('agent gateway takes a type the route lists in content_types, its text under "body"', async () => {
    const port = await freePort();
    await configWith(home, port, ['content_types: [text/plain]', 'prompt: "Alert: {body}"']);
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const response = await post(port, 'Disk full on db1', { 'content-type': 'text/plain; charset=utf-8' });

    expect(response.status).toBe(202);
    expect(await eventually(() => output().includes('Answer to: Alert: Disk full on db1'), 20_000)).toBe(true);
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  });
});
