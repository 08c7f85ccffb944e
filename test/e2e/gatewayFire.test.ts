import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../helpers/freePort.js';
import { eventually } from '../helpers/processLiveness.js';
import { FakePortal } from '../support/fakePortal.js';
import { createJob, invocations, makeAgentHome, removeAgentHome, startAgent, storedJob } from './agentCli.js';

/** decisions §11 through the real executable: a gateway with cron.provider managed, webhooks off. */
describe('agent gateway: the fire endpoint (cron.provider managed)', () => {
  let portal: FakePortal;
  let home: string;
  let port: number;
  const gateways: ChildProcess[] = [];

  beforeEach(async () => {
    portal = await FakePortal.start();
    port = await freePort();
    const managed = portal.managedSettings(`http://127.0.0.1:${port}`);
    home = await makeAgentHome({
      extraConfig: [
        'cron:',
        '  provider: managed',
        '  managed:',
        ...Object.entries(managed).map(([key, value]) => `    ${key}: ${value}`),
        'platforms:',
        '  webhook:',
        '    enabled: false',
        '    extra:',
        '      host: 127.0.0.1',
        `      port: ${port}`,
      ].join('\n'),
    });
  });

  afterEach(async () => {
    for (const gateway of gateways.splice(0)) {
      if (gateway.exitCode === null && gateway.signalCode === null) {
        gateway.kill('SIGTERM');
        await once(gateway, 'exit');
      }
    }
    await portal.close();
    await removeAgentHome(home);
  });

  async function startGateway(): Promise<() => string> {
    const gateway = startAgent(['gateway'], { home, env: { AGENT_CRON_SCHEDULER_TOKEN: portal.schedulerToken } });
    gateways.push(gateway);
    let output = '';
    gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    gateway.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    expect(await eventually(() => /fire endpoint listening on 127\.0\.0\.1:\d+/.test(output), 10_000)).toBe(true);
    return () => output;
  }

  const callback = () => `http://127.0.0.1:${port}`;

  it('answers a fire with 202 and runs the job once; a second fire of the slot is stale', async () => {
    const id = await createJob(home, ['every 1h', 'Fired report', '--name', 'fired', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    await startGateway();

    const first = await portal.fire(callback(), { job_id: id, fire_at: slot }, portal.mint(id));
    expect(first).toMatchObject({ status: 202, body: { status: 'accepted', job_id: id } });
    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);

    const second = await portal.fire(callback(), { job_id: id, fire_at: slot }, portal.mint(id));
    expect(second).toMatchObject({ status: 200, body: { status: 'stale' } });
    expect(invocations(home)).toHaveLength(1);
    expect(Date.parse(storedJob(home, id).next_run_at!)).toBeGreaterThan(Date.parse(slot));
  }, 30_000);

  it('answers 401 to a forged token and 200 gone to an unknown job, without a run', async () => {
    const id = await createJob(home, ['every 1h', 'Fired report', '--name', 'fired', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    await startGateway();

    const forged = portal.forge({ alg: 'none', kid: 'rsa-1' }, portal.claims(id));
    expect(await portal.fire(callback(), { job_id: id, fire_at: slot }, forged)).toMatchObject({ status: 401, body: { error: 'invalid fire token' } });
    expect(await portal.fire(callback(), { job_id: 'nosuchjob', fire_at: slot }, portal.mint('nosuchjob'))).toMatchObject({ status: 200, body: { status: 'gone' } });
    expect(invocations(home)).toHaveLength(0);
  }, 30_000);
});
