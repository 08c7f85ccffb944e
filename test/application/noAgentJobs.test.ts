import type { FakeScript } from '../support/fakes/FakeScriptExecutor.js';
import { cronHarness } from '../support/cronHarness.js';

const HOUR = 3_600_000;

/** A due hourly job that runs only `check.sh`, whose run gives `result`. */
async function scriptOnlyJob(h: ReturnType<typeof cronHarness>, result: FakeScript) {
  h.scripts.scripts['check.sh'] = result;
  const job = await h.createJob.execute({
    schedule: 'every 1h',
    prompt: '',
    name: 'Disks',
    script: 'check.sh',
    no_agent: true,
    deliver: 'telegram:42',
  });
  h.clock.advance(HOUR);
  return job;
}

describe('a job that runs without the agent', () => {
  it("delivers its script's output, wrapped as an answer, without starting the agent", async () => {
    const h = cronHarness();
    const job = await scriptOnlyJob(h, { stdout: 'sda1: 91% full\n' });

    const [run] = (await h.runDueJobs.execute()).ran;

    expect(h.agent.requests).toHaveLength(0);
    expect(run!.report.outcome).toEqual({ status: 'ok' });
    expect(h.channel.sent.map((sent) => sent.text)).toEqual([
      `Cronjob Response: Disks\n(job_id: ${job.id})\n-------------\n\nsda1: 91% full\n\nNote: The agent cannot see this message, and therefore cannot respond to it.`,
    ]);
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'ok', repeat: { completed: 1 } });
    const [ledgered] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
    expect(ledgered).toMatchObject({ status: 'ok', model: null, prompt: null, answer: 'sda1: 91% full' });
    expect(h.outputs.latest(job.id)).toContain('- Agent: not run (no_agent)\n');
  });

  it('runs with no model configured at all', async () => {
    const h = cronHarness();
    h.agent.configured = false;
    await scriptOnlyJob(h, { stdout: 'fine' });

    const [run] = (await h.runDueJobs.execute()).ran;

    expect(run!.report.outcome.status).toBe('ok');
    expect(h.channel.sent).toHaveLength(1);
  });

  it.each([
    ['empty output', { stdout: '  \n' }],
    ['[SILENT]', { stdout: 'nothing new [SILENT]\n' }],
    ['the wakeAgent gate', { stdout: '{"wakeAgent": false}\n' }],
  ])('delivers nothing for %s, and the run is ok', async (_what, result) => {
    const h = cronHarness();
    const job = await scriptOnlyJob(h, result);

    await h.runDueJobs.execute();

    expect(h.channel.sent).toEqual([]);
    expect(h.agent.requests).toHaveLength(0);
    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'ok', last_error: null });
  });

  it('is an error with the Script Error text when its script fails, and sends the failure notice', async () => {
    const h = cronHarness();
    const job = await scriptOnlyJob(h, { exitCode: 3, stdout: 'half a report', stderr: 'df: /mnt: no such file\n' });

    await h.runDueJobs.execute();

    expect(h.agent.requests).toHaveLength(0);
    const stored = h.repository.get(job.id)!;
    expect(stored.last_status).toBe('error');
    expect(stored.last_error).toBe('Script Error: The script exited with code 3.\n\ndf: /mnt: no such file');
    expect(h.channel.sent.map((sent) => sent.text)).toEqual([`⚠️ Cron job 'Disks' failed: ${stored.last_error}`]);
    const [ledgered] = await h.ledger.list({ kind: 'cron', subject: job.id, limit: 1 });
    expect(ledgered).toMatchObject({ status: 'error', model: null, answer: null, error: stored.last_error });
  });

  it('is refused without a script, on create and on an edit that removes it, and can be given the agent back with a prompt', async () => {
    const h = cronHarness();
    await expect(h.createJob.execute({ schedule: 'every 1h', prompt: 'x', no_agent: true })).rejects.toThrow(/no pre-run script/);

    h.scripts.scripts['check.sh'] = { stdout: 'ok' };
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: '', script: 'check.sh', no_agent: true });
    await expect(h.editJob.execute({ job: job.id, script: null })).rejects.toThrow(/no pre-run script/);
    await expect(h.editJob.execute({ job: job.id, no_agent: false })).rejects.toThrow(/no prompt/);

    const edited = await h.editJob.execute({ job: job.id, no_agent: false, prompt: 'Comment on the disks' });
    expect(edited).toMatchObject({ no_agent: false, prompt: 'Comment on the disks', script: 'check.sh' });
    expect(await h.editJob.execute({ job: job.id, no_agent: true })).toMatchObject({ no_agent: true });
  });
});
