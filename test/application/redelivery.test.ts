import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import { RepoCommentError } from '../../src/application/ports/RepoCommenter.js';
import { ERROR_CODES } from '../../src/domain/errorCodes.js';
import type { WebhookRoute } from '../../src/domain/webhook/WebhookRoute.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeAgentRunner } from '../support/fakes/FakeAgentRunner.js';
import { FakeMemoryStore, FakeSkillLibrary } from '../support/fakes/FakeContextFiles.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { FakeWebhookRoutes, aRoute } from '../support/fakes/FakeWebhookRoutes.js';
import { InMemoryRunLedger } from '../support/fakes/InMemoryRunLedger.js';
import { InMemoryWebhookRunRecords } from '../support/fakes/InMemoryWebhookRunRecords.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { ManualTimer } from '../support/fakes/ManualTimer.js';
import { RecordingDeliveryChannel } from '../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingRepoCommenter } from '../support/fakes/RecordingRepoCommenter.js';
import { cronHarness } from '../support/cronHarness.js';
import { WEBHOOK_WORKER_SETTINGS } from '../support/webhookWorkerSettings.js';
import { redeliverWebhookRun, webhookRunPipeline } from '../support/runPipeline.js';

/** What a use case threw: its code and sentence. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  throw new Error('expected a refusal');
}

describe('agent cron redeliver', () => {
  /** A job delivering to `deliver` whose one run (by hand) answered "Disk is 91% full." and whose delivery failed on `failing`. */
  async function failedDelivery(deliver = 'telegram', failing: string[] = ['telegram']) {
    const h = cronHarness({ platforms: ['telegram', 'slack'] });
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check the disks', name: 'disks', deliver });
    for (const platform of failing) h.channel.failing.add(platform);
    h.agent.reply('Disk is 91% full.');
    const { report } = await h.runJobNow.execute({ job: 'disks' });
    for (const platform of failing) h.channel.failing.delete(platform);
    h.clock.advance(60_000);
    return { h, job, runId: report.runId! };
  }

  it("delivers the failed run's recorded answer, wrapped, without running the agent, and the job's status says so", async () => {
    const { h, job, runId } = await failedDelivery();
    expect(await h.repository.findById(job.id)).toMatchObject({ last_status: 'delivery_failed', failure_streak: 1 });

    const redelivered = await h.redeliverJobRun.execute({ job: 'disks' });

    expect(h.agent.requests).toHaveLength(1);
    expect(h.channel.sent.map((each) => each.text)).toEqual([expect.stringContaining('Cronjob Response: disks')]);
    expect(h.channel.sent[0]!.text).toContain('Disk is 91% full.');
    expect(redelivered).toMatchObject({
      lastRun: true,
      outcome: { status: 'ok' },
      sent: [{ target: 'telegram', outcome: 'delivered', message_ids: ['1'], error: null }],
    });
    expect(await h.repository.findById(job.id)).toMatchObject({
      last_status: 'ok',
      last_delivery_error: null,
      failure_streak: 0,
      repeat: { completed: 1 },
    });
    expect(await h.ledger.get(runId)).toMatchObject({
      status: 'ok',
      error: null,
      answer: 'Disk is 91% full.',
      deliveries: [{ target: 'telegram', outcome: 'delivered', message_ids: ['1'], error: null }],
      redelivered_at: h.clock.now().toISOString(),
      redelivery_claim: null,
    });
  });

  it('sends only to the targets the answer did not reach, and to all again once it reached every one', async () => {
    const { h, runId } = await failedDelivery('telegram,slack', ['slack']);
    expect(h.channel.sent.map((each) => each.target.platform)).toEqual(['telegram']);

    await h.redeliverJobRun.execute({ job: 'disks', run: runId });
    expect(h.channel.sent.map((each) => each.target.platform)).toEqual(['telegram', 'slack']);
    expect((await h.ledger.get(runId))!.deliveries.map((each) => [each.target, each.outcome])).toEqual([
      ['telegram', 'delivered'],
      ['slack', 'delivered'],
    ]);

    await h.redeliverJobRun.execute({ job: 'disks', run: runId });
    expect(h.channel.sent.map((each) => each.target.platform)).toEqual(['telegram', 'slack', 'telegram', 'slack']);
  });

  it('records a redelivery that fails again: the run and the job keep delivery_failed with the new reason', async () => {
    const { h, job, runId } = await failedDelivery();
    h.channel.failing.add('telegram');
    h.channel.refusals.set('telegram', 'telegram is still down (HTTP 503)');

    const redelivered = await h.redeliverJobRun.execute({ job: job.id });

    expect(redelivered.outcome).toMatchObject({ status: 'delivery_failed', deliveryError: 'telegram: telegram is still down (HTTP 503)' });
    expect(await h.repository.findById(job.id)).toMatchObject({
      last_status: 'delivery_failed',
      last_delivery_error: 'telegram: telegram is still down (HTTP 503)',
      failure_streak: 1,
    });
    expect(await h.ledger.get(runId)).toMatchObject({ status: 'delivery_failed', error: 'telegram: telegram is still down (HTTP 503)' });
  });

  it("leaves the job's status alone when the run is not its last, and picks by default the latest run that has an answer", async () => {
    const { h, job, runId } = await failedDelivery();
    h.agent.reply(new AgentRunError('idle_timeout', 'idle timeout: no output for 600 s'));
    await h.runJobNow.execute({ job: 'disks' });
    h.clock.advance(60_000);

    const redelivered = await h.redeliverJobRun.execute({ job: 'disks' });

    expect(redelivered.run.id).toBe(runId);
    expect(redelivered.lastRun).toBe(false);
    expect(h.channel.sent).toHaveLength(1);
    expect(await h.repository.findById(job.id)).toMatchObject({ last_status: 'error', failure_streak: 2 });
  });

  it('refuses a run without an answer, a [SILENT] one, an unknown run and a job with only its output file, in one sentence each', async () => {
    // No failure or recovery notice: nothing is sent at all.
    const h = cronHarness({ settings: { failureAlerts: 'off' } });
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Check', name: 'checks', deliver: 'telegram' });
    h.agent.reply(new AgentRunError('idle_timeout', 'idle timeout: no output for 600 s'));
    const failed = (await h.runJobNow.execute({ job: 'checks' })).report.runId!;
    h.clock.advance(60_000);

    expect(await refusal(h.redeliverJobRun.execute({ job: 'checks' }))).toEqual({
      code: ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
      message: `Job ${job.id} 'checks' has no recorded run with an answer to deliver: its last run failed (idle timeout: no output for 600 s).`,
    });
    expect(await refusal(h.redeliverJobRun.execute({ job: 'checks', run: failed }))).toEqual({
      code: ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
      message: `Run ${failed} of job ${job.id} 'checks' has no answer to deliver: it failed (idle timeout: no output for 600 s).`,
    });

    h.agent.reply('[SILENT]');
    const silent = (await h.runJobNow.execute({ job: 'checks' })).report.runId!;
    expect((await refusal(h.redeliverJobRun.execute({ job: 'checks', run: silent }))).message).toBe(
      `Run ${silent} of job ${job.id} 'checks' has no answer to deliver: it answered [SILENT], which is never delivered.`,
    );
    expect(await refusal(h.redeliverJobRun.execute({ job: 'checks', run: 'nope' }))).toEqual({
      code: ERROR_CODES.RUNS.NOT_FOUND,
      message: `Job ${job.id} 'checks' has no recorded run "nope"; "agent cron runs ${job.id} --json" gives the ids of its runs.`,
    });
    expect((await refusal(h.redeliverJobRun.execute({ job: 'nothing' }))).code).toBe(ERROR_CODES.JOB.NOT_FOUND);

    const local = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Note', name: 'notes', deliver: 'local' });
    const noted = (await h.runJobNow.execute({ job: 'notes' })).report.runId!;
    expect((await refusal(h.redeliverJobRun.execute({ job: 'notes' }))).message).toBe(
      `Job ${local.id} 'notes' delivers only to its output files (deliver: local), which hold the answer of run ${noted} already; give it a chat target with "agent cron edit ${local.id} --deliver …" to send it somewhere.`,
    );
    // A run of another job is not one of this job's runs.
    expect((await refusal(h.redeliverJobRun.execute({ job: 'checks', run: noted }))).code).toBe(ERROR_CODES.RUNS.NOT_FOUND);
    expect(h.channel.sent).toEqual([]);
    expect(h.agent.requests).toHaveLength(3);
  });

  it('lets one of two redeliveries at once send the answer; the other is refused while the claim holds', async () => {
    const { h, runId } = await failedDelivery();
    let release!: () => void;
    h.channel.held.set('telegram', new Promise<void>((resolve) => (release = resolve)));

    const first = h.redeliverJobRun.execute({ job: 'disks' });
    const second = await refusal(h.redeliverJobRun.execute({ job: 'disks' }));
    release();
    await first;

    expect(second.code).toBe(ERROR_CODES.RUNS.BUSY);
    expect(second.message).toMatch(
      new RegExp(
        `^The answer of run ${runId.replace('.', '\\.')} of job \\w+ 'disks' is being delivered again by test-host:1 \\(since .+\\); wait for that to end, then see "agent cron runs \\w+"\\.$`,
      ),
    );
    expect(h.channel.sent).toHaveLength(1);
    expect((await h.ledger.get(runId))!.redelivery_claim).toBeNull();
  });

  it('takes over the claim of a redelivery whose process is gone, and of one older than ten minutes', async () => {
    const { h, runId } = await failedDelivery();
    const dead = { by: 'test-host:999', at: h.clock.now().toISOString() };
    h.identity.dead.add(dead.by);
    await h.ledger.claimForRedelivery(runId, dead, null);

    await h.redeliverJobRun.execute({ job: 'disks' });
    expect(h.channel.sent).toHaveLength(1);

    await h.ledger.claimForRedelivery(runId, { by: 'other-host:5', at: h.clock.now().toISOString() }, null);
    expect((await refusal(h.redeliverJobRun.execute({ job: 'disks' }))).code).toBe(ERROR_CODES.RUNS.BUSY);
    h.clock.advance(11 * 60_000);
    await h.redeliverJobRun.execute({ job: 'disks' });
    expect(h.channel.sent).toHaveLength(2);
  });

  it('delivers again to a bot-chat mailbox under a receipt of its own', async () => {
    const h = cronHarness();
    await h.createJob.execute({ schedule: 'every 1h', prompt: 'Summarise', name: 'digest', deliver: 'bot-chat' });
    h.botChat.commandLineFailure = 'the chat is busy';
    await h.runJobNow.execute({ job: 'digest' });
    h.botChat.commandLineFailure = null;
    h.clock.advance(60_000);

    const redelivered = await h.redeliverJobRun.execute({ job: 'digest' });

    expect(redelivered.outcome.status).toBe('ok');
    expect(h.botChat.delivered).toEqual([
      expect.objectContaining({ jobName: 'digest', executionId: `test-host:1@${h.clock.now().toISOString()}` }),
    ]);
  });
});

const SETTINGS = WEBHOOK_WORKER_SETTINGS;

describe('agent webhook redeliver', () => {
  /** A worker's run path and `agent webhook redeliver`, on the same records and ledger. */
  function webhooks(routes: WebhookRoute[] = [aRoute('alerts', { deliver: 'telegram', prompt: 'Alert: {labels.alertname}' })]) {
    const clock = new ManualClock('2026-06-01T08:00:05Z');
    const records = new InMemoryWebhookRunRecords();
    const ledger = new InMemoryRunLedger(undefined, () => clock.now());
    const channel = new RecordingDeliveryChannel(['telegram']);
    const commenter = new RecordingRepoCommenter();
    const agent = new FakeAgentRunner();
    const log = new RecordingLogger();
    const execution = webhookRunPipeline({
      routes: new FakeWebhookRoutes(routes),
      agent: agent,
      memory: new FakeMemoryStore(),
      skills: new FakeSkillLibrary({}),
      channel: channel,
      commenter: commenter,
      settings: SETTINGS,
      log: log,
      records: records,
      clock: clock,
      timer: new ManualTimer(),
      ledger: ledger,
    }).execution;
    const redeliver = redeliverWebhookRun({
      ledger: ledger,
      records: records,
      channel: channel,
      commenter: commenter,
      clock: clock,
      identity: new FakeProcessIdentity(),
      log: log,
    });
    return { clock, records, ledger, channel, commenter, agent, execution, redeliver };
  }
  const alert = (n = 1) => anEvent(n, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } });

  it("delivers a run's recorded answer again where it went, without running the agent, and its records say so", async () => {
    const w = webhooks();
    w.channel.failing.add('telegram');
    w.agent.reply('Free some space on db1.');
    expect((await w.execution.run(alert())).status).toBe('delivery_failed');
    w.channel.failing.delete('telegram');
    w.clock.advance(60_000);

    const redelivered = await w.redeliver.execute({ run: 'event-1' });

    expect(w.agent.requests).toHaveLength(1);
    expect(w.channel.sent).toEqual([
      { target: { kind: 'platform', platform: 'telegram', destination: null, threadId: null }, text: 'Free some space on db1.' },
    ]);
    expect(redelivered).toMatchObject({ deliveredTo: 'telegram', report: { status: 'delivered', error: null } });
    expect(await w.records.find('alerts', 'event-1')).toMatchObject({
      outcome: 'delivered',
      error: null,
      answer: 'Free some space on db1.',
    });
    expect(await w.ledger.get('event-1')).toMatchObject({
      status: 'ok',
      error: null,
      deliveries: [{ target: 'telegram', outcome: 'delivered', message_ids: ['1'], error: null }],
      redelivered_at: '2026-06-01T08:01:05.000Z',
      redelivery_claim: null,
    });
  });

  it('posts the pull-request comment again, and records a redelivery that fails again', async () => {
    const w = webhooks([
      aRoute('github', {
        deliver: 'repo_comment',
        deliverExtra: { repo: '{repository.full_name}', pr_number: '{number}' },
        prompt: 'Review {number}',
      }),
    ]);
    const event = anEvent(1, {
      route: 'github',
      event: 'pull_request',
      payload: { number: 12, repository: { full_name: 'octo/widgets' } },
    });
    w.commenter.failWith = new RepoCommentError('failed', 'gh could not reach github.com');
    w.agent.reply('LGTM');
    await w.execution.run(event);

    const failedAgain = await w.redeliver.execute({ run: 'event-1' });
    expect(failedAgain.report).toEqual({
      status: 'delivery_failed',
      error: 'delivery to octo/widgets#12 failed: gh could not reach github.com',
    });
    expect(await w.ledger.get('event-1')).toMatchObject({
      status: 'delivery_failed',
      error: 'delivery to octo/widgets#12 failed: gh could not reach github.com',
    });

    w.commenter.failWith = null;
    await w.redeliver.execute({ run: 'event-1' });
    expect(w.commenter.comments).toEqual([{ repo: 'octo/widgets', prNumber: 12, body: 'LGTM' }]);
    expect(await w.records.find('github', 'event-1')).toMatchObject({ outcome: 'delivered', error: null });
  });

  it('refuses a run that failed, an unknown id and a cron run, in one sentence each', async () => {
    const w = webhooks();
    w.agent.reply(new AgentRunError('failed', 'the model is down'));
    await w.execution.run(alert());

    expect(await refusal(w.redeliver.execute({ run: 'event-1' }))).toEqual({
      code: ERROR_CODES.RUNS.NOTHING_TO_DELIVER,
      message: "The webhook run event-1 (route 'alerts') has no answer to deliver: it failed (the model is down).",
    });
    expect(await refusal(w.redeliver.execute({ run: 'event-9' }))).toEqual({
      code: ERROR_CODES.RUNS.NOT_FOUND,
      message: 'No webhook run has the id "event-9"; "agent webhook runs" lists the runs with their ids.',
    });
    await w.ledger.save({ ...(await w.ledger.get('event-1'))!, id: 'job1.20260601T080000000Z', kind: 'cron', subject: 'job1' });
    expect((await refusal(w.redeliver.execute({ run: 'job1.20260601T080000000Z' }))).code).toBe(ERROR_CODES.RUNS.NOT_FOUND);
    expect(w.channel.sent).toEqual([]);
  });

  it('delivers a [SILENT] answer as it is: the word means nothing to webhook routes', async () => {
    const w = webhooks();
    w.agent.reply('[SILENT]');
    await w.execution.run(alert());

    await w.redeliver.execute({ run: 'event-1' });

    expect(w.channel.sent.map((each) => each.text)).toEqual(['[SILENT]', '[SILENT]']);
  });
});
