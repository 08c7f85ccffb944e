import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../support/freePort.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { eventually } from '../support/processLiveness.js';
import { FakePortal, type FireAnswer } from '../support/fakePortal.js';
import { createJob, invocations, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, startAgent, storedJob } from './agentCli.js';

/** config.yaml lines: cron.provider managed trusting `portal`, webhooks off, the listener on `listenPort` (0: any free port). */
function managedConfig(portal: FakePortal, callbackPort: number, listenPort = callbackPort): string {
  const managed = portal.managedSettings(`http://127.0.0.1:${callbackPort}`);
  return [
    'cron:',
    '  provider: managed',
    '  managed:',
    ...Object.entries(managed).map(([key, value]) => `    ${key}: ${value}`),
    'platforms:',
    '  webhook:',
    '    enabled: false',
    '    extra:',
    '      host: 127.0.0.1',
    `      port: ${listenPort}`,
  ].join('\n');
}

/** Whether a fetch failed because nothing listens yet (the gateway is still starting). */
function connectionRefused(error: unknown): boolean {
  return (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
}

/** Starts `agent gateway` on `home` with the portal's scheduler token and `env`, without waiting for it; kept in `gateways`. */
function launchManagedGateway(
  home: string,
  portal: FakePortal,
  gateways: ChildProcess[],
  env: Record<string, string> = {},
): { gateway: ChildProcess; output: () => string } {
  const gateway = startAgent(['gateway'], { home, env: { AGENT_CRON_SCHEDULER_TOKEN: portal.schedulerToken, ...env } });
  gateways.push(gateway);
  let output = '';
  gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  gateway.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return { gateway, output: () => output };
}

/** Waits for a launched gateway's listening line; `url` is the base its fires go to. */
async function untilListening(started: {
  gateway: ChildProcess;
  output: () => string;
}): Promise<{ gateway: ChildProcess; output: () => string; url: string }> {
  const listening = /fire endpoint listening on 127\.0\.0\.1:(\d+)/;
  expect(await eventually(() => listening.test(started.output()), 30_000)).toBe(true);
  return { ...started, url: `http://127.0.0.1:${listening.exec(started.output())![1]}` };
}

/** Stops every gateway still running with `signal`, each waited for. */
async function stopGateways(gateways: ChildProcess[], signal: NodeJS.Signals): Promise<void> {
  for (const gateway of gateways.splice(0)) {
    if (gateway.exitCode === null && gateway.signalCode === null) {
      const exited = once(gateway, 'exit');
      gateway.kill(signal);
      await exited;
    }
  }
}

/** The fire endpoint through the real executable: a gateway with cron.provider managed, webhooks off. */
describe('agent gateway: the fire endpoint (cron.provider managed)', () => {
  let portal: FakePortal;
  let home: string;
  let port: number;
  const gateways: ChildProcess[] = [];

  beforeEach(async () => {
    portal = await FakePortal.start();
    port = await freePort();
    home = await makeAgentHome({ extraConfig: managedConfig(portal, port) });
  });

  afterEach(async () => {
    await stopGateways(gateways, 'SIGTERM');
    await portal.close();
    await removeAgentHome(home);
  });

  const launchGateway = () => launchManagedGateway(home, portal, gateways);
  const startGateway = () => untilListening(launchGateway());

  const callback = () => `http://127.0.0.1:${port}`;
  const withToken = { AGENT_CRON_SCHEDULER_TOKEN: 'scheduler-token-for-tests' };
  const createArmed = async (args: string[]) => {
    const run = await runAgent(['cron', 'create', ...args, '--deliver', 'local', '--no-tick'], { home, env: withToken });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    return /^Created job ([0-9a-f]{12}) /.exec(run.stdout)![1]!;
  };

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
  }, 120_000);

  it('answers 401 to a token replayed after a restart (kill -9) for the next slot, and the job does not run again', async () => {
    const id = await createJob(home, ['every 1h', 'Fired report', '--name', 'fired', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    const first = await startGateway();
    const token = portal.mint(id);
    expect(await portal.fire(callback(), { job_id: id, fire_at: slot }, token)).toMatchObject({ status: 202 });
    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);
    const next = storedJob(home, id).next_run_at!;

    const exited = once(first.gateway, 'exit');
    first.gateway.kill('SIGKILL');
    await exited;
    const { output } = await startGateway();

    expect(await portal.fire(callback(), { job_id: id, fire_at: next }, token)).toMatchObject({
      status: 401,
      body: { error: 'invalid fire token' },
    });
    expect(await eventually(() => output().includes('its jti was used already (a replay)'), 10_000)).toBe(true);
    expect(invocations(home)).toEqual(['Fired report']);
    expect(storedJob(home, id).next_run_at).toBe(next);
    // A fresh token for that slot is taken.
    expect(await portal.fire(callback(), { job_id: id, fire_at: next }, portal.mint(id))).toMatchObject({ status: 202 });
  }, 120_000);

  it('answers 401 to a token minted for one slot and sent with another, and fires the slot it names', async () => {
    const id = await createJob(home, ['every 1h', 'Fired report', '--name', 'fired', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    const otherSlot = new Date(Date.parse(slot) + 3_600_000).toISOString();
    const { output } = await startGateway();
    const token = portal.mint(id, { claims: { fire_at: otherSlot } });

    expect(await portal.fire(callback(), { job_id: id, fire_at: slot }, token)).toMatchObject({
      status: 401,
      body: { error: 'invalid fire token' },
    });
    expect(await eventually(() => output().includes(`it is bound to another slot (${otherSlot})`), 10_000)).toBe(true);
    expect(invocations(home)).toEqual([]);

    expect(await portal.fire(callback(), { job_id: id, fire_at: slot }, portal.mint(id, { claims: { fire_at: slot } }))).toMatchObject({
      status: 202,
    });
    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);
    // A fresh token for the slot already fired: stale, not 401, so the portal does not retry.
    expect(await portal.fire(callback(), { job_id: id, fire_at: slot }, portal.mint(id, { claims: { fire_at: slot } }))).toMatchObject({
      status: 200,
      body: { status: 'stale' },
    });
    expect(invocations(home)).toEqual(['Fired report']);
  }, 120_000);

  it('answers 401 to a forged token and 200 gone to an unknown job, without a run', async () => {
    const id = await createJob(home, ['every 1h', 'Fired report', '--name', 'fired', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    await startGateway();

    const forged = portal.forge({ alg: 'none', kid: 'rsa-1' }, portal.claims(id));
    expect(await portal.fire(callback(), { job_id: id, fire_at: slot }, forged)).toMatchObject({
      status: 401,
      body: { error: 'invalid fire token' },
    });
    expect(await portal.fire(callback(), { job_id: 'nosuchjob', fire_at: slot }, portal.mint('nosuchjob'))).toMatchObject({
      status: 200,
      body: { status: 'gone' },
    });
    expect(invocations(home)).toHaveLength(0);
  }, 120_000);

  it('answers 401 to a token issued a year ahead of its clock, though signed by the portal', async () => {
    const id = await createJob(home, ['every 1h', 'Fired report', '--name', 'fired', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    const { output } = await startGateway();
    const later = Math.floor(Date.now() / 1000) + 365 * 24 * 3600;

    const answer = await portal.fire(
      callback(),
      { job_id: id, fire_at: slot },
      portal.mint(id, { claims: { iat: later, exp: later + 60 } }),
    );

    expect(answer).toMatchObject({ status: 401, body: { error: 'invalid fire token' } });
    expect(await eventually(() => output().includes('its iat is more than 30 s ahead'), 10_000)).toBe(true);
    expect(invocations(home)).toHaveLength(0);
  }, 120_000);

  it('logs the kids of forged tokens with their control characters escaped: no colour, window title or NUL reaches the terminal', async () => {
    const id = await createJob(home, ['every 1h', 'Fired report', '--name', 'fired', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    const { output } = await startGateway();
    const kids = ['\u001b[31m', '\u001b]0;pwned\u0007', '\u0000'];

    for (const kid of kids) {
      const forged = portal.forge({ alg: 'RS256', typ: 'JWT', kid }, portal.claims(id));
      expect(await portal.fire(callback(), { job_id: id, fire_at: slot }, forged)).toMatchObject({
        status: 401,
        body: { error: 'invalid fire token' },
      });
    }

    const escaped = [
      'its key \\u001b[31m is not in the JWKS',
      'its key \\u001b]0;pwned\\u0007 is not in the JWKS',
      'its key \\u0000 is not in the JWKS',
    ];
    expect(await eventually(() => escaped.every((line) => output().includes(line)), 10_000)).toBe(true);
    for (const raw of ['\u001b', '\u0007', '\u0000']) expect(output()).not.toContain(raw);
    expect(invocations(home)).toHaveLength(0);
  }, 120_000);

  it('two gateways on one home fired the same slot at the same moment: one 202, one stale, one run', async () => {
    await removeAgentHome(home);
    home = await makeAgentHome({ extraConfig: managedConfig(portal, port, 0) });
    const id = await createJob(home, ['every 1h', 'Shared report', '--name', 'shared', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    const [one, two] = [await startGateway(), await startGateway()];
    expect(one.url).not.toBe(two.url);

    const answers = await Promise.all([one, two].map(({ url }) => portal.fire(url, { job_id: id, fire_at: slot }, portal.mint(id))));

    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 202]);
    expect(answers.find((answer) => answer.status === 200)!.body).toEqual({ status: 'stale' });
    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);
    expect(invocations(home)).toEqual(['Shared report']);
  }, 120_000);

  it('two gateways on one home sent one token at the same moment: one 202, one 401, one run', async () => {
    await removeAgentHome(home);
    home = await makeAgentHome({ extraConfig: managedConfig(portal, port, 0) });
    const id = await createJob(home, ['every 1h', 'Shared report', '--name', 'shared', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    const [one, two] = [await startGateway(), await startGateway()];
    const token = portal.mint(id);

    const answers = await Promise.all([one, two].map(({ url }) => portal.fire(url, { job_id: id, fire_at: slot }, token)));

    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 401]);
    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);
    expect(invocations(home)).toEqual(['Shared report']);
  }, 120_000);

  it('scale to zero: a fire sent while the gateway starts is answered 202 and runs once', async () => {
    const id = await createJob(home, ['every 1h', 'Cold start report', '--name', 'cold', '--deliver', 'local']);
    const slot = storedJob(home, id).next_run_at!;
    const token = portal.mint(id);
    const { output } = launchGateway();

    let answer: FireAnswer | null = null;
    let refused = 0;
    const deadline = Date.now() + 10_000;
    while (answer === null) {
      try {
        answer = await portal.fire(callback(), { job_id: id, fire_at: slot }, token);
      } catch (error) {
        // Nothing listens yet: the token never reached the gateway, so the same one is sent again.
        if (!connectionRefused(error) || Date.now() > deadline) throw error;
        refused += 1;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    expect(answer).toMatchObject({ status: 202, body: { status: 'accepted', job_id: id } });
    expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);
    expect(invocations(home)).toEqual(['Cold start report']);
    expect(refused).toBeGreaterThan(0);
    expect(output()).not.toMatch(/error/i);
  }, 120_000);

  describe('the managed cycle', () => {
    it('a recurring job: armed by agent cron create, fired, run once, re-armed at its next slot; agent cron remove cancels', async () => {
      await startGateway();
      const id = await createArmed(['every 1h', 'Hourly report', '--name', 'hourly']);
      const slot = storedJob(home, id).next_run_at!;
      expect(portal.armed.get(id)).toMatchObject({ fire_at: slot, callback_url: `${callback()}/api/cron/fire` });

      const fired = await portal.fireArmed(id);

      expect(fired).toMatchObject({ status: 202, fire_at: slot });
      expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);
      expect(invocations(home)).toEqual(['Hourly report']);
      const next = storedJob(home, id).next_run_at!;
      expect(Date.parse(next)).toBeGreaterThan(Date.parse(slot));
      await portal.until(() => portal.armed.get(id)?.fire_at === next, 10_000);

      const removed = await runAgent(['cron', 'remove', id], { home, env: withToken });
      expect(removed.code).toBe(0);
      expect(portal.armed.has(id)).toBe(false);
      expect(portal.callsOf('cancel').map((call) => call.body)).toContainEqual({ job_id: id });
      expect(await portal.fire(callback(), { job_id: id, fire_at: next }, portal.mint(id))).toMatchObject({
        status: 200,
        body: { status: 'gone' },
      });
      expect(invocations(home)).toHaveLength(1);
    }, 120_000);

    it('a one-shot: armed by agent cron create, fired ahead of its time on our clock, run once, then disarmed', async () => {
      await startGateway();
      const id = await createArmed(['2h', 'Once only', '--name', 'once']);
      expect(portal.armed.get(id)?.fire_at).toBe(storedJob(home, id).next_run_at);

      expect(await portal.fireArmed(id)).toMatchObject({ status: 202 });

      expect(await eventually(() => storedJob(home, id).state === 'completed', 10_000)).toBe(true);
      await portal.until(() => !portal.armed.has(id), 10_000);
      expect(portal.callsOf('cancel').map((call) => call.body)).toContainEqual({ job_id: id });
      expect(invocations(home)).toEqual(['Once only']);
    }, 120_000);
  });

  describe('a JWKS URL that does not serve keys', () => {
    const refusedThenUp = async (url: string, id: string, slot: string, gateway: ChildProcess) => {
      const answer = await portal.fire(url, { job_id: id, fire_at: slot }, portal.mint(id));
      expect(answer).toMatchObject({ status: 401, body: { error: 'invalid fire token' } });
      expect(portal.jwksRequests).toBeGreaterThan(0);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect(gateway.exitCode).toBeNull();
      expect(invocations(home)).toEqual([]);
    };

    it('serving garbage: fires answer 401 and the gateway stays up', async () => {
      const id = await createJob(home, ['every 1h', 'Report', '--name', 'report', '--deliver', 'local']);
      portal.jwksMode = 'garbage';
      const { gateway, url, output } = await startGateway();

      await refusedThenUp(url, id, storedJob(home, id).next_run_at!, gateway);
      expect(output()).toMatch(/JWKS at .* could not be fetched or read/);
    }, 120_000);

    it('failing: fires answer 401, the gateway stays up, and once the JWKS answers again a fire is accepted', async () => {
      const id = await createJob(home, ['every 1h', 'Report', '--name', 'report', '--deliver', 'local']);
      const slot = storedJob(home, id).next_run_at!;
      portal.jwksMode = 'error';
      const { gateway, url } = await startGateway();
      await refusedThenUp(url, id, slot, gateway);

      portal.jwksMode = 'keys';
      // The JWKS is fetched again at most every 10 s however many fires come: poll with a deadline.
      let accepted = false;
      const deadline = Date.now() + 20_000;
      while (!accepted && Date.now() < deadline) {
        accepted = (await portal.fire(url, { job_id: id, fire_at: slot }, portal.mint(id))).status === 202;
        if (!accepted) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(accepted).toBe(true);
      expect(await eventually(() => storedJob(home, id).last_status === 'ok', 10_000)).toBe(true);
      expect(invocations(home)).toEqual(['Report']);
    }, 120_000);
  });
});

/** Gateways on two machines sharing one PostgreSQL database, each with a home of its own. */
describe('agent gateway: fire tokens on PostgreSQL replicas (cron.provider managed)', () => {
  let portal: FakePortal;
  let scratch: ScratchDatabase;
  const homes: string[] = [];
  const gateways: ChildProcess[] = [];

  beforeAll(() => requireBuiltAgent());

  beforeEach(async () => {
    portal = await FakePortal.start();
    scratch = await scratchDatabase();
  });

  afterEach(async () => {
    await stopGateways(gateways, 'SIGKILL');
    await portal.close();
    await scratch.drop();
    for (const home of homes.splice(0)) await removeAgentHome(home);
  });

  /** A replica's home: the managed trigger, the database, its listener on a port of its own. */
  async function replicaHome(): Promise<{ home: string; port: number }> {
    const port = await freePort();
    const home = await makeAgentHome({ extraConfig: `${managedConfig(portal, port)}\ndatabase:\n  url: ${scratch.url}` });
    homes.push(home);
    return { home, port };
  }

  const shownJob = async (home: string, id: string) =>
    JSON.parse((await runAgent(['cron', 'show', id, '--json'], { home })).stdout) as { next_run_at: string; last_status: string | null };

  it('answers 401 on one replica to a token used on the other, and the job does not run again', async () => {
    const [one, two] = [await replicaHome(), await replicaHome()];
    // The first gateway sets the schema up.
    const [first, second] = [
      await untilListening(launchManagedGateway(one.home, portal, gateways)),
      await untilListening(launchManagedGateway(two.home, portal, gateways)),
    ];
    const id = await createJob(one.home, ['every 1h', 'Replica report', '--name', 'replicated', '--deliver', 'local']);
    const slot = (await shownJob(one.home, id)).next_run_at;
    const token = portal.mint(id);

    expect(await portal.fire(first.url, { job_id: id, fire_at: slot }, token)).toMatchObject({ status: 202 });
    const ran = async () => (await shownJob(one.home, id)).last_status === 'ok';
    const deadline = Date.now() + 20_000;
    while (!(await ran()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await ran()).toBe(true);
    const next = (await shownJob(one.home, id)).next_run_at;
    expect(Date.parse(next)).toBeGreaterThan(Date.parse(slot));

    expect(await portal.fire(second.url, { job_id: id, fire_at: next }, token)).toMatchObject({
      status: 401,
      body: { error: 'invalid fire token' },
    });
    expect(await eventually(() => second.output().includes('its jti was used already (a replay)'), 10_000)).toBe(true);
    expect([...invocations(one.home), ...invocations(two.home)]).toEqual(['Replica report']);
    expect((await shownJob(two.home, id)).next_run_at).toBe(next);
  }, 120_000);
});
