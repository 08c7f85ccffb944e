import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { invocations, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startGatewayUntil, writeHomeFile } from './agentCli.js';
import { commandModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';

const SECRET = 'it-is-a-secret';

function configWith(home: string, port: number, window: string): Promise<string> {
  return writeHomeFile(
    home,
    'config.yaml',
    [
      'timezone: UTC',
      ...commandModelLines([process.execPath, `${home}/model.mjs`]),
      ...webhookListenerLines(port, SECRET),
      '        github:',
      '          events: [pull_request]',
      '          prompt: "Handle PR {number} push {push}"',
      '          coalesce:',
      '            key: "{repository.full_name}#{number}"',
      `            window: ${window}`,
      '',
    ].join('\n'),
  );
}

const push = (port: number, n: number) =>
  postPullRequestEvent(port, SECRET, `delivery-${n}`, { action: 'synchronize', number: 7, push: n, repository: { full_name: 'octo/app' } });

interface ListedRun {
  id: string;
  delivery_id: string;
  coalesced: string[];
}

async function listedRuns(home: string): Promise<ListedRun[]> {
  const listed = await runAgent(['webhook', 'runs', '--json'], { home });
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout) as ListedRun[];
}

/** Pushes to one pull request within a route's coalescing window make one run, also across a restart. */
describe('agent gateway coalescing webhook events', () => {
  let home: string;
  let port: number;
  const running: ChildProcess[] = [];

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    home = await makeAgentHome();
    port = await freePort();
  });

  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await removeAgentHome(home);
  });

  it('runs the agent once on the last of ten signed pushes with one key, each accepted at once', async () => {
    await configWith(home, port, '3s');
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    for (let n = 1; n <= 10; n += 1) {
      const response = await push(port, n);
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ status: 'accepted', route: 'github', event: 'pull_request', delivery_id: `delivery-${n}` });
    }

    expect(await eventually(() => output().includes('Answer to: Handle PR 7 push 10'), 30_000)).toBe(true);
    expect(invocations(home)).toHaveLength(1);
    const runs = await listedRuns(home);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.delivery_id).toBe('delivery-10');
    expect(runs[0]!.coalesced).toEqual(Array.from({ length: 10 }, (_, index) => `delivery-${index + 1}`));
    const table = await runAgent(['webhook', 'runs'], { home });
    expect(table.stdout).toContain(`coalesced into ${runs[0]!.id}`);
    gateway.kill('SIGTERM');
    await once(gateway, 'exit');
  });

  it('runs a group once when the gateway is killed with -9 inside its window and started again', async () => {
    await configWith(home, port, '4s');
    const first = await startGatewayUntil(home, 'webhook listening on');
    running.push(first.gateway);
    for (let n = 1; n <= 5; n += 1) expect((await push(port, n)).status).toBe(202);
    first.gateway.kill('SIGKILL');
    await once(first.gateway, 'exit');
    expect(invocations(home)).toHaveLength(0);

    const second = await startGatewayUntil(home, 'webhook listening on');
    running.push(second.gateway);

    expect(await eventually(() => second.output().includes('Answer to: Handle PR 7 push 5'), 30_000)).toBe(true);
    second.gateway.kill('SIGTERM');
    await once(second.gateway, 'exit');
    expect(invocations(home)).toHaveLength(1);
    const runs = await listedRuns(home);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.coalesced).toEqual(['delivery-1', 'delivery-2', 'delivery-3', 'delivery-4', 'delivery-5']);
  });
});
