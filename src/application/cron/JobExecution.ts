import { inject, injectable, optional } from 'inversify';
import { describeTarget, type DeliveryTarget, type PlatformTarget } from '../../domain/DeliveryTarget.js';
import { jobTimeZone, type Job } from '../../domain/Job.js';
import { alertsFailure, countRun, finishRun, isFailedRun, markRunOutcome, pauseJob } from '../../domain/jobLifecycle.js';
import {
  buildRunContext,
  scriptErrorBlock,
  scriptErrorText,
  scriptOutputBlock,
  scriptSaysSleep,
} from '../../domain/RunContext.js';
import { AGENT_NOT_RUN_NO_AGENT, renderRunReport, runReportFileName } from '../../domain/RunReport.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import {
  failureNotice,
  isSilentResponse,
  pausedAfterFailuresNotice,
  pausedAfterFailuresReason,
  recoveryNotice,
  wrapResponse,
} from '../../domain/response.js';
import { cronRunToolsets } from '../../domain/toolsets.js';
import { AgentRunError, type AgentRunner, type ModelSelection } from '../ports/AgentRunner.js';
import type { BotChatDelivery } from '../ports/BotChatDelivery.js';
import type { MemoryStore, SkillLibrary } from '../ports/ContextFiles.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { RunOutputStore } from '../ports/RunOutputStore.js';
import type { RunLedger } from '../ports/RunLedger.js';
import type { Clock } from '../ports/Clock.js';
import type { Timer } from '../ports/Timer.js';
import { cronRunId, RUNNING_RECORD_AFTER_MS, type RunDelivery, type RunRecord } from '../../domain/runs/RunRecord.js';
import { mergeDeliveries, outcomeOfDeliveries } from '../../domain/runs/redelivery.js';
import type { ScriptExecutor, ScriptResult } from '../ports/ScriptExecutor.js';
import { JobPreflight, type Preflight } from './JobPreflight.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { CRON_RUN_VARIABLE } from '../../domain/cronRunGuard.js';
import { errorText } from '../../domain/errors.js';
import { escapeControlCharacters } from '../../domain/controlCharacters.js';
import { botChatMessage, executionIdOf } from '../../domain/botChat.js';

/** What one run produced, for the caller to show; the job record gets `outcome`. */
export interface JobRunReport {
  outcome: RunOutcome;
  response: string | null;
  outputPath: string | null;
  answeredBy: string | null;
  /** How the answer went to each target, in order; empty when nothing was sent. */
  deliveries?: RunDelivery[];
  /** The run's id in the run ledger. */
  runId?: string;
}

/**
 * A gateway's cron run whose answer is recorded (durably, in the run ledger) and whose delivery
 * is still to be made, target by target, each in its platform's lane (CronDeliveries). Its run
 * slot is free and its job back in service; `last_status` is written once every target answered.
 */
export interface PendingJobDelivery {
  /** The job as its run was claimed (its failure streak the one before the run, for notices). */
  job: Job;
  startedAt: Date;
  /** The bot-chat execution id of the run, the same after a restart. */
  executionId: string;
  /** Every target of the run, `local` included: the outcome is computed over them all. */
  targets: DeliveryTarget[];
  /** The targets still to be sent to (chat platforms and bot-chat), in order. */
  toSend: DeliveryTarget[];
  /** The answer, as the agent gave it. */
  text: string;
  /** The run's record as saved: `running`, with the answer, `delivery_pending`, claimed by this process. */
  record: RunRecord;
}

/** The end of the agent's part of a run: a finished run, or an answer waiting for its delivery. */
export type AnsweredRun =
  | { report: JobRunReport; job: Job | null; pending: null }
  | { report: null; job: Job | null; pending: PendingJobDelivery };

/** The lane a target's delivery waits in: its platform's (the lane webhook answers use too), or bot-chat's. */
export function laneOfTarget(target: DeliveryTarget): string {
  return target.kind === 'platform' ? `platform:${target.platform}` : target.kind;
}

/** An answer the run path hands on instead of sending it (the gateway's runs). */
interface AnswerToDeliver {
  answered: { targets: DeliveryTarget[]; text: string; answeredBy: string | null };
}

/** What the ledger says went wrong in a run: the error, or the delivery's; null when nothing did. */
function runError(outcome: RunOutcome): string | null {
  switch (outcome.status) {
    case 'error':
    case 'blocked_config':
      return outcome.error;
    case 'delivery_failed':
      return outcome.deliveryError;
    case 'ok':
    case 'delivery_queued':
      return null;
  }
}


const RUN_CANCELLED = 'the gateway stopped before the run finished';

/** The first line of a `## Script Error` block: what went wrong, in one sentence; null when nothing did. */
function scriptProblem(result: ScriptResult, timeoutMs: number): string | null {
  if (result.startProblem !== null) return result.startProblem;
  if (result.timedOut) return `The script timed out after ${Math.round(timeoutMs / 1000)} s.`;
  if (result.signal !== null) return `The script was ended by signal ${result.signal}.`;
  if (result.exitCode === null) return 'The script was stopped before it finished.';
  if (result.exitCode !== 0) return `The script exited with code ${result.exitCode}.`;
  return null;
}

/**
 * The run path shared by the tick and `agent cron run` (docs/cron.md): pre-dispatch validation,
 * the pre-run script, a fresh agent session, the output file, delivery. It never throws: every
 * ending is a RunOutcome, so the marking step always has something to write.
 */
@injectable()
export class JobExecution {
  private readonly checks: JobPreflight;

  constructor(
    @inject(TOKENS.JobRunAgentRunner) private readonly agent: AgentRunner,
    @inject(TOKENS.DeliveryChannel) private readonly channel: DeliveryChannel,
    @inject(TOKENS.RunOutputStore) private readonly outputs: RunOutputStore,
    @inject(TOKENS.MemoryStore) private readonly memory: MemoryStore,
    @inject(TOKENS.SkillLibrary) private readonly skills: SkillLibrary,
    @inject(TOKENS.ScriptExecutor) private readonly scripts: ScriptExecutor,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.JobRepository) private readonly repository: JobRepository,
    @inject(TOKENS.BotChatDelivery) private readonly botChat: BotChatDelivery,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    /** Without it (tests that build this by hand), a run is in the ledger as running from its start. */
    @inject(TOKENS.Timer) @optional() private readonly timer: Timer | null = null,
  ) {
    this.checks = new JobPreflight(agent, channel, scripts, settings, botChat);
  }

  /**
   * Runs a job already claimed as `running` and then marks it: the run is counted
   * and `last_status` written on the job as it is stored now, so a pause made meanwhile holds.
   * Returns the report and the job as stored afterwards (null if it was removed meanwhile).
   *
   * `signal` cancels the run (the gateway stopping, a command stopped by a signal): the script's
   * and the agent's process trees are killed and the run is recorded as `interrupted:` followed by
   * the abort's reason when it is a string, which uses up its slot like any run.
   */
  async runClaimed(
    job: Job,
    startedAt: Date,
    options: { signal?: AbortSignal; slot?: Date | null } = {},
  ): Promise<{ report: JobRunReport; job: Job | null }> {
    const ran = await this.runUntilAnswered(job, startedAt, options, false);
    if (ran.pending) throw new Error('a run that delivers at once left its delivery pending');
    return { report: ran.report, job: ran.job };
  }

  /**
   * The gateway's run of a claimed job (docs/delivery.md): as `runClaimed`, but an answer that
   * goes to a chat platform or bot-chat is not sent here. It is recorded in the run ledger
   * (durably, `delivery_pending`, claimed by the job's claimant), the run is counted and the job
   * released (`scheduled` or `completed`), and it is returned `pending`, for CronDeliveries to
   * send in each platform's lane. `last_status` is left as it was until then. When the ledger
   * cannot keep the answer, it is delivered here and now, as `runClaimed` does.
   */
  async answerClaimed(job: Job, startedAt: Date, options: { signal?: AbortSignal; slot?: Date | null } = {}): Promise<AnsweredRun> {
    return this.runUntilAnswered(job, startedAt, options, true);
  }

  private async runUntilAnswered(
    job: Job,
    startedAt: Date,
    options: { signal?: AbortSignal; slot?: Date | null },
    deliverLater: boolean,
  ): Promise<AnsweredRun> {
    const running: RunRecord = {
      id: cronRunId(job.id, startedAt),
      kind: 'cron',
      subject: job.id,
      name: job.name,
      slot: options.slot ? options.slot.toISOString() : null,
      event: null,
      delivery_id: null,
      started_at: startedAt.toISOString(),
      finished_at: null,
      status: 'running',
      model: null,
      // A job that runs only its script asks no agent anything.
      prompt: job.no_agent ? null : job.prompt,
      answer: null,
      error: null,
      deliveries: [],
      // Who runs it: once that process is gone, the ledger records the run interrupted (AbandonedRuns).
      claimant: job.claim?.by ?? null,
    };
    // A run that ends at once is written to the ledger once, when it ends; one still going after
    // RUNNING_RECORD_AFTER_MS shows as running until then (as a webhook run does).
    const ended = new AbortController();
    const shownRunning = this.timer
      ? this.timer.wait(RUNNING_RECORD_AFTER_MS, ended.signal, { background: true }).then(() => (ended.signal.aborted ? undefined : this.toLedger(running)))
      : this.toLedger(running);
    if (!this.timer) await shownRunning;
    let executed: JobRunReport | AnswerToDeliver;
    let preflight: Preflight;
    try {
      preflight = await this.checks.check(job);
      executed = await this.execute(job, startedAt, preflight, options.signal, deliverLater);
    } finally {
      ended.abort();
      // Its record, if written, comes before the last.
      await shownRunning;
    }
    let report: JobRunReport;
    if ('answered' in executed) {
      const { targets, text, answeredBy } = executed.answered;
      const pending = await this.recordAnswer(job, startedAt, running, targets, text, answeredBy);
      if (pending !== null) {
        const stored = await this.repository.updateById(job.id, (current) => {
          const counted = countRun(current);
          return { job: counted, result: counted };
        });
        return { report: null, job: stored, pending };
      }
      // The ledger cannot keep the answer: it is delivered now, in the run's slot.
      report = await this.deliverAnswer(job, startedAt, targets, text, answeredBy, false);
    } else {
      report = executed;
    }
    const stored = await this.markEnded(job, report.outcome, preflight.targets, (current, outcome) => finishRun(current, outcome, startedAt));
    await this.toLedger({
      ...running,
      finished_at: this.clock.now().toISOString(),
      status: report.outcome.status,
      model: report.answeredBy,
      answer: report.response,
      error: runError(report.outcome),
      deliveries: report.deliveries ?? [],
    });
    return { report: { ...report, runId: running.id }, job: stored, pending: null };
  }

  /**
   * Writes `last_status` (through `mark`), pauses the job after `cron.pause_after_failures`
   * failed runs, and sends the recovery or pause notice; the job as stored afterwards.
   */
  private async markEnded(
    job: Job,
    outcome: RunOutcome,
    targets: DeliveryTarget[],
    mark: (current: Job, outcome: RunOutcome) => Job,
    noticesInBackground = false,
  ): Promise<Job | null> {
    const pauseAfter = this.settings.pauseAfterFailures ?? 0;
    let pausedBecause: string | null = null;
    const stored = await this.repository.updateById(job.id, (current) => {
      let finished = mark(current, outcome);
      if (pauseAfter > 0 && isFailedRun(outcome) && finished.failure_streak >= pauseAfter && finished.state === 'scheduled') {
        pausedBecause = pausedAfterFailuresReason(finished.failure_streak, runError(outcome) ?? '');
        finished = pauseJob(finished, this.clock.now(), pausedBecause);
      }
      return { job: finished, result: finished };
    });
    const notices = this.noticesAfter(job, outcome, targets, pausedBecause);
    // From a delivery lane, a notice to a platform that hangs must not hold up the lane.
    if (noticesInBackground) void notices;
    else await notices;
    return stored;
  }

  /**
   * The answer recorded in the ledger, durably, before its delivery: the pending delivery, or
   * null when the ledger could not take it (logged).
   */
  private async recordAnswer(
    job: Job,
    startedAt: Date,
    running: RunRecord,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
  ): Promise<PendingJobDelivery | null> {
    const record: RunRecord = {
      ...running,
      model: answeredBy,
      answer: text,
      delivery_pending: true,
      redelivery_claim: { by: job.claim?.by ?? 'unknown', at: this.clock.now().toISOString() },
    };
    try {
      await this.ledger.save(record);
    } catch (error) {
      this.log.warn(`could not record the answer of job '${job.name}' before its delivery; delivering it now, in its run slot`, { job: job.id, error: errorText(error) });
      return null;
    }
    const toSend = targets.filter((target) => target.kind === 'platform' || target.kind === 'bot-chat');
    return { job, startedAt, executionId: executionIdOf(job, startedAt), targets, toSend, text, record };
  }

  /**
   * Sends a pending answer to one of its targets (in that target's lane), and says how it went;
   * never throws.
   */
  deliverPendingTo(pending: PendingJobDelivery, target: DeliveryTarget): Promise<RunDelivery[]> {
    return this.sendAnswer(pending.job, pending.executionId, [target], pending.text);
  }

  /**
   * Keeps how a pending answer went to the targets tried so far (still `delivery_pending`), so
   * that a restart sends it only to the others. Logged when the ledger cannot take it.
   */
  async recordPendingProgress(pending: PendingJobDelivery, sent: RunDelivery[]): Promise<void> {
    await this.toLedger({ ...pending.record, deliveries: mergeDeliveries(pending.record.deliveries, sent) });
  }

  /**
   * The end of a pending delivery, once every target answered: the run report is written, the
   * job's `last_status` and detail fields say how it went (unless a later run of the job was
   * marked already), the recovery or pause notice is sent (in the background), and the ledger's
   * record is finished, without the claim. The report and the job as stored afterwards.
   */
  async finishPending(pending: PendingJobDelivery, sent: RunDelivery[]): Promise<{ report: JobRunReport; job: Job | null }> {
    const { job, startedAt, text, record } = pending;
    const answeredBy = record.model;
    const deliveries = mergeDeliveries(record.deliveries, sent);
    const written = await this.finish(job, startedAt, outcomeOfDeliveries(deliveries), { response: text, answeredBy });
    if (pending.targets.some((target) => target.kind === 'local') && !deliveries.some((delivery) => delivery.target === 'local')) {
      const saved = written.outputPath !== null;
      deliveries.push({ target: 'local', outcome: saved ? 'delivered' : 'failed', message_ids: [], error: saved ? null : 'the output file could not be written' });
    }
    const outcome = outcomeOfDeliveries(deliveries);
    if (outcome.status === 'delivery_failed') this.log.warn(`delivery of job '${job.name}' failed`, { job: job.id, error: outcome.deliveryError });
    const stored = await this.markEnded(job, outcome, pending.targets, (current, result) => markRunOutcome(current, result, startedAt), true);
    await this.toLedger({
      ...record,
      finished_at: this.clock.now().toISOString(),
      status: outcome.status,
      error: runError(outcome),
      deliveries,
      delivery_pending: false,
      redelivery_claim: null,
    });
    return { report: { ...written, outcome, deliveries, runId: record.id }, job: stored };
  }

  /**
   * A pending delivery left by a stopped process, claimed by this one (`record`, as claimed): its
   * answer goes to the job's targets it has not reached yet. A job removed meanwhile, or targets
   * that cannot be resolved now, end the run `delivery_failed` here; null then.
   */
  async resumePending(record: RunRecord): Promise<PendingJobDelivery | null> {
    const job = (await this.repository.load()).jobs.find((each) => each.id === record.subject) ?? null;
    const startedAt = new Date(record.started_at);
    const fail = async (why: string): Promise<null> => {
      this.log.warn(`the answer of run ${record.id} cannot be delivered: ${why}`, { job: record.subject, run: record.id });
      await this.toLedger({
        ...record,
        finished_at: this.clock.now().toISOString(),
        status: 'delivery_failed',
        error: why,
        delivery_pending: false,
        redelivery_claim: null,
      });
      return null;
    };
    if (job === null) return fail('its job was removed before the answer was delivered');
    if (record.answer === null) return fail('the run record holds no answer');
    const resolved = await this.deliveryTargets(job);
    if ('error' in resolved) return fail(resolved.error);
    const reached = new Set(record.deliveries.filter((delivery) => delivery.outcome !== 'failed').map((delivery) => delivery.target));
    const toSend = resolved.targets.filter((target) => (target.kind === 'platform' || target.kind === 'bot-chat') && !reached.has(describeTarget(target)));
    const problems: RunDelivery[] = resolved.problems
      .filter((each) => !reached.has(each.target))
      .map((each) => ({ target: each.target, outcome: 'failed', message_ids: [], error: each.problem }));
    return {
      job,
      startedAt,
      executionId: executionIdOf(job, startedAt),
      targets: resolved.targets,
      toSend,
      text: record.answer,
      record: { ...record, deliveries: mergeDeliveries(record.deliveries, problems) },
    };
  }

  /**
   * A slot skipped by the catch-up policy `skip` (docs/cron.md, Missed runs): nothing ran, so the
   * ledger's record is `skipped`, with the slot, no prompt, no model and `reason` as its error.
   * Returns the record's id.
   */
  async recordSkipped(job: Job, slot: Date, foundAt: Date, reason: string): Promise<string> {
    const id = cronRunId(job.id, foundAt);
    await this.toLedger({
      id,
      kind: 'cron',
      subject: job.id,
      name: job.name,
      slot: slot.toISOString(),
      event: null,
      delivery_id: null,
      started_at: foundAt.toISOString(),
      finished_at: foundAt.toISOString(),
      status: 'skipped',
      model: null,
      prompt: null,
      answer: null,
      error: reason,
      deliveries: [],
    });
    return id;
  }

  /** The ledger shows runs; one it cannot take is logged, and the run goes on. */
  private async toLedger(run: RunRecord): Promise<void> {
    try {
      await this.ledger.save(run);
    } catch (error) {
      this.log.warn(`could not write run ${run.id} to the run ledger`, { job: run.subject, error: errorText(error) });
    }
  }

  private async execute(job: Job, startedAt: Date, preflight: Preflight, signal: AbortSignal | undefined, deliverLater: boolean): Promise<JobRunReport | AnswerToDeliver> {
    if (!preflight.ok) {
      const outcome: RunOutcome = { status: 'blocked_config', error: preflight.error };
      await this.notifyFailure(job, preflight.targets, preflight.error);
      return this.finish(job, startedAt, outcome, { error: preflight.error });
    }
    // Every process the run starts carries the job's id: from inside a run, job-changing commands refuse.
    const environment = { [CRON_RUN_VARIABLE]: job.id };
    try {
      if (job.no_agent) return await this.runScriptOnly(job, startedAt, preflight.targets, environment, signal, deliverLater);
      const scriptBlock = await this.runScript(job, environment, signal);
      if (scriptBlock === 'sleep') {
        return this.finish(job, startedAt, { status: 'ok' }, { response: '[SILENT] (the script asked not to wake the agent)' });
      }
      const context = buildRunContext({
        memories: await this.memory.load(),
        skills: await Promise.all(job.skills.map(async (name) => ({ name, content: await this.findSkill(job, name) }))),
        prompt: job.prompt,
        scriptBlock,
      });
      const result = await this.agent.run({
        context,
        selection: this.selectionFor(job),
        toolsets: cronRunToolsets(),
        idleTimeoutMs: this.settings.idleTimeoutMs,
        unattended: true,
        environment,
        signal,
      });
      if (result.text.trim() === '') {
        const error = 'agent produced an empty response';
        await this.notifyFailure(job, preflight.targets, error);
        return this.finish(job, startedAt, { status: 'error', error }, { answeredBy: result.answeredBy });
      }
      return await this.deliverAnswer(job, startedAt, preflight.targets, result.text, result.answeredBy, deliverLater);
    } catch (error) {
      if (signal?.aborted) {
        // No failure notice: the gateway is stopping and its grace period is over.
        const interrupted = `interrupted: ${typeof signal.reason === 'string' ? signal.reason : RUN_CANCELLED}`;
        return this.finish(job, startedAt, { status: 'error', error: interrupted }, { error: interrupted });
      }
      const message = error instanceof AgentRunError ? error.message : `run failed: ${errorText(error)}`;
      if (!(error instanceof AgentRunError)) this.log.error('job run failed unexpectedly', { job: job.id, error: errorText(error) });
      await this.notifyFailure(job, preflight.targets, message);
      return this.finish(job, startedAt, { status: 'error', error: message }, { error: message });
    }
  }

  private selectionFor(job: Job): ModelSelection {
    return this.checks.selectionFor(job);
  }

  private async runScript(job: Job, environment: Record<string, string>, signal?: AbortSignal): Promise<string | 'sleep' | null> {
    if (!job.script) return null;
    const result = await this.scripts.run(job.script, { timeoutMs: this.settings.scriptTimeoutMs, environment, signal });
    if (signal?.aborted) throw new Error(RUN_CANCELLED);
    const problem = scriptProblem(result, this.settings.scriptTimeoutMs);
    if (problem !== null) return scriptErrorBlock(problem, result.stderr);
    return scriptSaysSleep(result.stdout) ? 'sleep' : scriptOutputBlock(result.stdout);
  }

  /**
   * A job without the agent (`no_agent`): its script's stdout is the answer, delivered as an
   * agent's would be; empty output, `[SILENT]` or the `{"wakeAgent": false}` gate deliver nothing,
   * and a script that fails is the run's error (its Script Error text).
   */
  private async runScriptOnly(
    job: Job,
    startedAt: Date,
    targets: DeliveryTarget[],
    environment: Record<string, string>,
    signal: AbortSignal | undefined,
    deliverLater: boolean,
  ): Promise<JobRunReport | AnswerToDeliver> {
    if (!job.script) throw new Error('the job runs no agent and has no script');
    const result = await this.scripts.run(job.script, { timeoutMs: this.settings.scriptTimeoutMs, environment, signal });
    if (signal?.aborted) throw new Error(RUN_CANCELLED);
    const problem = scriptProblem(result, this.settings.scriptTimeoutMs);
    if (problem !== null) {
      const error = scriptErrorText(problem, result.stderr);
      await this.notifyFailure(job, targets, error);
      return this.finish(job, startedAt, { status: 'error', error }, { error });
    }
    const output = result.stdout.trimEnd();
    if (output.trim() === '') return this.finish(job, startedAt, { status: 'ok' }, {});
    if (scriptSaysSleep(output)) return this.finish(job, startedAt, { status: 'ok' }, { response: output });
    return this.deliverAnswer(job, startedAt, targets, output, null, deliverLater);
  }

  private async findSkill(job: Job, name: string): Promise<string | null> {
    const content = await this.skills.find(name);
    if (content === null) this.log.warn(`skill "${name}" of job '${job.name}' was not found`, { job: job.id });
    return content;
  }

  private async deliverAnswer(
    job: Job,
    startedAt: Date,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
    deliverLater: false,
  ): Promise<JobRunReport>;
  private async deliverAnswer(
    job: Job,
    startedAt: Date,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
    deliverLater: boolean,
  ): Promise<JobRunReport | AnswerToDeliver>;
  private async deliverAnswer(
    job: Job,
    startedAt: Date,
    targets: DeliveryTarget[],
    text: string,
    answeredBy: string | null,
    deliverLater: boolean,
  ): Promise<JobRunReport | AnswerToDeliver> {
    if (isSilentResponse(text)) {
      return this.finish(job, startedAt, { status: 'ok' }, { response: text, answeredBy });
    }
    if (deliverLater && targets.some((target) => target.kind === 'platform' || target.kind === 'bot-chat')) {
      return { answered: { targets, text, answeredBy } };
    }
    const deliveries = await this.sendAnswer(job, executionIdOf(job, startedAt), targets, text);
    const finished = await this.finish(job, startedAt, outcomeOfDeliveries(deliveries), { response: text, answeredBy });
    if (targets.some((target) => target.kind === 'local')) {
      const written = finished.outputPath !== null;
      deliveries.push({
        target: 'local',
        outcome: written ? 'delivered' : 'failed',
        message_ids: [],
        error: written ? null : 'the output file could not be written',
      });
    }
    const outcome = outcomeOfDeliveries(deliveries);
    if (outcome.status === 'delivery_failed') {
      this.log.warn(`delivery of job '${job.name}' failed`, { job: job.id, error: outcome.deliveryError });
    }
    return { ...finished, outcome, deliveries };
  }

  /**
   * The job's targets as a run delivers to them, and a sentence for each that cannot be
   * delivered to now (see JobPreflight.deliveryTargets).
   */
  deliveryTargets(job: Job): ReturnType<JobPreflight['deliveryTargets']> {
    return this.checks.deliveryTargets(job);
  }

  /**
   * Sends `text`, an answer of `job`, to each target the way every run does
   * (`cron.wrap_response`, a bot-chat target through its mailbox under `executionId`, each
   * platform's splitting and retries), and says how it went to each, in order. `local` and
   * anything else that is only the output file get no entry: the output file is not written
   * here. Used by the run itself and by `agent cron redeliver`. Never throws.
   */
  async sendAnswer(job: Job, executionId: string, targets: readonly DeliveryTarget[], text: string): Promise<RunDelivery[]> {
    const deliveries: RunDelivery[] = [];
    const message = this.settings.wrapResponse ? wrapResponse(job, text) : text;
    for (const target of targets) {
      try {
        if (target.kind === 'bot-chat') {
          const receipt = await this.botChat.deliver({
            profile: target.profile,
            jobId: job.id,
            jobName: job.name,
            executionId,
            message: botChatMessage(job.name, text),
          });
          deliveries.push({ target: describeTarget(target), outcome: receipt.lane === 'queued' ? 'queued' : 'delivered', message_ids: [receipt.receipt], error: null });
        } else {
          const messageIds = await this.deliverTo(target, message);
          if (messageIds !== null) deliveries.push({ target: describeTarget(target), outcome: 'delivered', message_ids: messageIds, error: null });
        }
      } catch (error) {
        // One line per target, and no control character a platform's answer may hold (a NUL, an
        // ESC) reaches last_delivery_error, the report or a terminal showing them.
        deliveries.push({ target: describeTarget(target), outcome: 'failed', message_ids: [], error: escapeControlCharacters(errorText(error)) });
      }
    }
    return deliveries;
  }

  /** The platform's message ids; null for a target that is not sent anywhere but the output file. */
  private async deliverTo(target: DeliveryTarget, message: string): Promise<string[] | null> {
    switch (target.kind) {
      case 'local':
      case 'origin':
      case 'all':
        return null;
      case 'platform':
        return (await this.channel.deliver(target, message)).messageIds;
      case 'bot-chat':
        throw new Error('bot-chat is delivered by the bot-chat lane, not as a platform message');
    }
  }

  /**
   * The failure notice of a failed run, to the job's platforms: on the first failure of a streak
   * only, on every one, or never (`cron.failure_alerts`; `job` is the job as claimed, with the
   * streak before this run).
   */
  private async notifyFailure(job: Job, targets: DeliveryTarget[], reason: string): Promise<void> {
    if (!alertsFailure(job, this.settings.failureAlerts ?? 'first')) return;
    await this.notify(job, targets, failureNotice(job.name, reason), 'failure notice');
  }

  /** After a run: the one notice that a streak of failures ended, or that the job was paused for it. */
  private async noticesAfter(job: Job, outcome: RunOutcome, targets: DeliveryTarget[], pausedBecause: string | null): Promise<void> {
    if (pausedBecause !== null) {
      this.log.warn(`job '${job.name}' ${pausedBecause}`, { job: job.id });
      await this.notify(job, targets, pausedAfterFailuresNotice(job.name, pausedBecause), 'pause notice');
    } else if (!isFailedRun(outcome) && job.failure_streak > 0 && (this.settings.failureAlerts ?? 'first') !== 'off') {
      await this.notify(job, targets, recoveryNotice(job.name, job.failure_streak), 'recovery notice');
    }
  }

  /** Best effort: a notice that cannot be sent is only logged. */
  private async notify(job: Job, targets: DeliveryTarget[], text: string, what: string): Promise<void> {
    const platforms = targets.filter((target): target is PlatformTarget => target.kind === 'platform');
    for (const target of platforms) {
      try {
        await this.channel.deliver(target, text);
      } catch (error) {
        this.log.warn(`could not send the ${what} of job '${job.name}'`, { job: job.id, error: errorText(error) });
      }
    }
  }

  /** Writes the run's output file; a failure to write it is logged, not fatal. */
  private async finish(
    job: Job,
    startedAt: Date,
    outcome: RunOutcome,
    details: { response?: string; error?: string; answeredBy?: string | null },
  ): Promise<JobRunReport> {
    // The report is named and dated in the job's zone (docs/cron.md).
    const timeZone = jobTimeZone(job, this.settings.timeZone);
    const content = renderRunReport({
      job,
      startedAt,
      timeZone,
      status: outcome.status,
      response: details.response ?? null,
      error: details.error ?? (outcome.status === 'error' || outcome.status === 'blocked_config' ? outcome.error : null),
      answeredBy: details.answeredBy ?? null,
      queuedReceipts: outcome.status === 'delivery_queued' ? outcome.receipts : outcome.status === 'delivery_failed' ? (outcome.queued ?? []) : [],
      deliveryError: outcome.status === 'delivery_failed' ? outcome.deliveryError : null,
      agent: job.no_agent ? AGENT_NOT_RUN_NO_AGENT : null,
    });
    let outputPath: string | null = null;
    try {
      outputPath = await this.outputs.save(
        job.id,
        runReportFileName(startedAt, timeZone),
        content,
        this.settings.outputRetention,
      );
    } catch (error) {
      this.log.warn(`could not write the output file of job '${job.name}'`, { job: job.id, error: errorText(error) });
    }
    return { outcome, response: details.response ?? null, outputPath, answeredBy: details.answeredBy ?? null };
  }
}
