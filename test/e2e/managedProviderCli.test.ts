import { FakePortal } from '../support/fakePortal.js';
import { inAScratchHomeEachTest, makeDue, runAgent, storedJob, storedJobs, writeHomeFile } from './agentCli.js';
import { commandModelLines } from './configLines.js';

/**
 * `cron.provider: managed` seen from the command line: every `agent cron` command
 * that changes a job arms or disarms it at the portal right after its write.
 */
describe('agent cron with the managed provider, end to end', () => {
  let home: string;
  let portal: FakePortal;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  beforeEach(async () => {
    portal = await FakePortal.start();
    const settings = portal.managedSettings('http://127.0.0.1:8644');
    await writeHomeFile(
      home,
      'config.yaml',
      [
        'timezone: UTC',
        ...commandModelLines([process.execPath, `${home}/model.mjs`]),
        'cron:',
        '  provider: managed',
        '  managed:',
        ...Object.entries(settings).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`),
        '',
      ].join('\n'),
    );
  });

  afterEach(async () => {
    await portal.close();
  });

  const agent = (args: string[], env: Record<string, string | undefined> = { AGENT_CRON_SCHEDULER_TOKEN: portal.token }) =>
    runAgent(['cron', ...args], { home, env });
  const created = (stdout: string) => /^Created job ([0-9a-f]{12}) /.exec(stdout)?.[1] ?? '';
  const authorized = (kind: 'provision' | 'cancel' | 'list') => portal.callsOf(kind).filter((call) => call.authorized);

  it('create arms the new job at its next_run_at; remove cancels it', async () => {
    const create = await agent(['create', 'every 1h', 'Report the weather', '--no-tick']);
    expect(create).toMatchObject({ code: 0, stderr: '' });
    const id = created(create.stdout);
    const nextRun = storedJob(home, id).next_run_at!;
    expect(portal.armed.get(id)).toMatchObject({
      fire_at: nextRun,
      callback_url: 'http://127.0.0.1:8644/api/cron/fire',
      dedup_key: `${id}:${nextRun}`,
    });

    const remove = await agent(['remove', id]);
    expect(remove.code).toBe(0);
    expect(authorized('cancel').map((call) => call.body)).toEqual([{ job_id: id }]);
    expect(portal.armed.has(id)).toBe(false);
  });

  it('pause disarms, resume arms again, edit moves the armed fire', async () => {
    const id = created((await agent(['create', 'every 1h', 'Report', '--no-tick'])).stdout);
    await agent(['pause', id]);
    expect(portal.armed.has(id)).toBe(false);
    await agent(['resume', id]);
    expect(portal.armed.get(id)?.fire_at).toBe(storedJob(home, id).next_run_at);
    await agent(['edit', id, '--schedule', 'every 3h']);
    expect(portal.armed.get(id)?.fire_at).toBe(storedJob(home, id).next_run_at);
    expect(portal.armed.size).toBe(1);
  });

  it('a one-shot run by hand is disarmed after its run', async () => {
    const id = created((await agent(['create', '2h', 'Once only', '--no-tick'])).stdout);
    expect(portal.armed.has(id)).toBe(true);
    const run = await agent(['run', id, '--force']);
    expect(run.code).toBe(0);
    expect(storedJob(home, id).state).toBe('completed');
    expect(portal.armed.has(id)).toBe(false);
  });

  it("a one-shot run by a command's implicit tick is disarmed right after its run", async () => {
    const id = created((await agent(['create', '2h', 'Once only', '--no-tick'])).stdout);
    expect(portal.armed.has(id)).toBe(true);
    await makeDue(home, id);

    const list = await agent(['list']);

    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(new RegExp(`Ran job ${id} 'Once only': ok`));
    expect(storedJob(home, id).state).toBe('completed');
    expect(authorized('cancel').map((call) => call.body)).toEqual([{ job_id: id }]);
    expect(portal.armed.has(id)).toBe(false);
  });

  it('a portal answering 503 while arming: the job is still created and the failure is logged', async () => {
    portal.failNext(503);
    const create = await agent(['create', 'every 1h', 'Report', '--no-tick']);
    expect(create.code).toBe(0);
    expect(storedJobs(home)).toHaveLength(1);
    expect(create.stderr).toMatch(/could not arm job .* answered 503\); the next reconcile tries again/);
    expect(portal.armed.size).toBe(0);
  });

  it('without AGENT_CRON_SCHEDULER_TOKEN: the job is created, no call is made, one warning says why', async () => {
    const create = await agent(['create', 'every 1h', 'Report', '--no-tick'], { AGENT_CRON_SCHEDULER_TOKEN: undefined });
    expect(create.code).toBe(0);
    expect(create.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/cron.provider "managed" cannot be used: AGENT_CRON_SCHEDULER_TOKEN is not set/),
    ]);
    expect(portal.calls).toEqual([]);
  });

  it('commands that change nothing make no call to the portal', async () => {
    await agent(['create', 'every 1h', 'Report', '--no-tick']);
    const before = portal.calls.length;
    expect((await agent(['list', '--no-tick'])).code).toBe(0);
    expect(portal.calls.length).toBe(before);
  });
});
