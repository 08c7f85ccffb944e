import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../support/freePort.js';
import { eventually, isRunning } from '../support/processLiveness.js';
import {
  hungModelPids,
  invocations,
  makeAgentHome,
  removeAgentHome,
  requireBuiltAgent,
  runAgent,
  writeHomeFile,
  startGatewayUntil,
} from './agentCli.js';
import { commandModelLines, webhookListenerLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';

const SECRET = 'it-is-a-secret';

function configWith(home: string, port: number, prompt: string): Promise<string> {
  return writeHomeFile(
    home,
    'config.yaml',
    [
      'timezone: UTC',
      ...commandModelLines([process.execPath, `${home}/model.mjs`]),
      ...webhookListenerLines(port, SECRET),
      '        github:',
      '          events: [pull_request]',
      `          prompt: ${JSON.stringify(prompt)}`,
      '',
    ].join('\n'),
  );
}

const postSigned = (port: number, delivery: string, payload: object) => postPullRequestEvent(port, SECRET, delivery, payload);

/** The gateway with its webhook listener, as an operator runs it. */
describe('agent gateway with webhooks', () => {
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

  it('prints the listening line, accepts a signed event and logs the agent answer', async () => {
    await configWith(home, port, 'Review PR #{number}: {pull_request.title}');
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const response = await postSigned(port, 'delivery-1', { action: 'opened', number: 42, pull_request: { title: 'Fix the flaky test' } });

    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ status: 'accepted', route: 'github', event: 'pull_request', delivery_id: 'delivery-1' });
    expect(output()).toContain(`webhook listening on 127.0.0.1:${port} — routes: github`);
    expect(await eventually(() => output().includes('Answer to: Review PR #42: Fix the flaky test'), 10_000)).toBe(true);
    // In text mode the line is printed once, as it is, not again as a log entry.
    expect(output().match(/webhook listening on/g)).toHaveLength(1);
    gateway.kill('SIGTERM');
    const [code] = await once(gateway, 'exit');
    expect(code).toBe(0);
  });

  it('finishes an event exactly once after being killed with -9 in the middle of its run', async () => {
    await configWith(home, port, 'Handle {number} [hang]');
    const first = await startGatewayUntil(home, 'webhook listening on');
    running.push(first.gateway);
    expect((await postSigned(port, 'delivery-crash', { action: 'opened', number: 7 })).status).toBe(202);
    expect(await eventually(() => invocations(home).length === 1, 10_000)).toBe(true);

    const [orphan] = hungModelPids(home);
    first.gateway.kill('SIGKILL');
    await once(first.gateway, 'exit');
    // Its agent dies with it (the kernel kills it), so it cannot finish the run a second time.
    expect(await eventually(() => !isRunning(orphan!), 5000)).toBe(true);
    // The restarted gateway's model answers instead of hanging.
    await configWith(home, port, 'Handle {number}');
    const second = await startGatewayUntil(home, 'webhook listening on');
    running.push(second.gateway);

    expect(await eventually(() => second.output().includes('Answer to: Handle 7'), 10_000)).toBe(true);
    second.gateway.kill('SIGTERM');
    await once(second.gateway, 'exit');
    const completedRuns = second.output().split('Answer to: Handle 7').length - 1;
    expect(completedRuns).toBe(1);
  });

  it('serves a subscription made while it runs, and agent webhook test reaches it', async () => {
    await configWith(home, port, 'Review PR #{number}');
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const subscribed = await runAgent(['webhook', 'subscribe', 'deploys', '--prompt', 'Deployment {status}', '--deliver', 'log'], { home });
    const tested = await runAgent(['webhook', 'test', 'deploys', '--payload', '{"status": "green"}'], { home });
    const configRoute = await runAgent(['webhook', 'test', 'github'], { home });

    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toContain(`http://127.0.0.1:${port}/webhooks/deploys`);
    expect(tested.code).toBe(0);
    expect(tested.stdout).toContain('202');
    expect(await eventually(() => output().includes('Answer to: Deployment green'), 10_000)).toBe(true);
    expect(configRoute.code).toBe(1);
    expect(configRoute.stderr).toMatch(/only for dynamic subscriptions/);
  });

  it('delivers the rendered prompt of a deliver_only subscription as it is, without running the agent', async () => {
    await configWith(home, port, 'Review PR #{number}');
    const { gateway, output } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const subscribed = await runAgent(
      ['webhook', 'subscribe', 'deploys', '--prompt', 'Deployment {status}', '--deliver', 'log', '--deliver-only'],
      { home },
    );
    const tested = await runAgent(['webhook', 'test', 'deploys', '--payload', '{"status": "green"}'], { home });

    expect(subscribed.code).toBe(0);
    expect(tested.stdout).toContain('202');
    const answered = await eventually(() => output().includes('Deployment green'), 10_000);
    if (!answered) throw new Error(output());
    expect(invocations(home)).toEqual([]);
    const [run] = JSON.parse((await runAgent(['webhook', 'runs', 'deploys', '--json'], { home })).stdout) as Array<Record<string, unknown>>;
    expect(run).toMatchObject({ outcome: 'delivered', answer: 'Deployment green', agent: 'not run (deliver_only)', model: null });
  });

  it('exits 1 naming the port and the config key when the port is in use', async () => {
    await configWith(home, port, 'x');
    const { gateway } = await startGatewayUntil(home, 'webhook listening on');
    running.push(gateway);

    const second = await runAgent(['gateway'], { home });

    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    expect(second.stderr).toContain('platforms.webhook.extra.port');
  });
});
