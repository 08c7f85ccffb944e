import { inject, injectable, optional } from 'inversify';
import { describeTarget, type DeliveryTarget, type PlatformTarget } from '../../domain/DeliveryTarget.js';
import { alertsFailure, finishRun, isFailedRun, jobTimeZone, pauseJob, type Job } from '../../domain/Job.js';
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
import { RUNNING_RECORD_AFTER_MS, type RunDelivery, type RunRecord } from '../../domain/runs/RunRecord.js';
import { outcomeOfDeliveries } from '../../domain/runs/redelivery.js';
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

/** A cron run's id in the run ledger: the job's id and the run's start (UTC, to the millisecond). */
export function cronRunId(jobId: string, startedAt: Date): string {
  return `${jobId}.${startedAt.toISOString().replace(/[-:.]/g, '')}`;
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
    let report: JobRunReport;
    let preflight: Preflight;
    try {
      preflight = await this.checks.check(job);
      report = await this.execute(job, startedAt, preflight, options.signal);
    } finally {
      ended.abort();
      // Its record, if written, comes before the last.
      await shownRunning;
    }
    const pauseAfter = this.settings.pauseAfterFailures ?? 0;
    let pausedBecause: string | null = null;
    const stored = await this.repository.updateById(job.id, (current) => {
      let finished = finishRun(current, report.outcome, startedAt);
      if (pauseAfter > 0 && isFailedRun(report.outcome) && finished.failure_streak >= pauseAfter && finished.state === 'scheduled') {
        pausedBecause = pausedAfterFailuresReason(finished.failure_streak, runError(report.outcome) ?? '');
        finished = pauseJob(finished, this.clock.now(), pausedBecause);
      }
      return { job: finished, result: finished };
    });
    await this.noticesAfter(job, report.outcome, preflight.targets, pausedBecause);
    await this.toLedger({
      ...running,
      finished_at: this.clock.now().toISOString(),
      status: report.outcome.status,
      model: report.answeredBy,
      answer: report.response,
      error: runError(report.outcome),
      deliveries: report.deliveries ?? [],
    });
    return { report: { ...report, runId: running.id }, job: stored };
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

  private async execute(job: Job, startedAt: Date, preflight: Preflight, signal?: AbortSignal): Promise<JobRunReport> {
    if (!preflight.ok) {
      const outcome: RunOutcome = { status: 'blocked_config', error: preflight.error };
      await this.notifyFailure(job, preflight.targets, preflight.error);
      return this.finish(job, startedAt, outcome, { error: preflight.error });
    }
    // Every process the run starts carries the job's id: from inside a run, job-changing commands refuse.
    const environment = { [CRON_RUN_VARIABLE]: job.id };
    try {
      if (job.no_agent) return await this.runScriptOnly(job, startedAt, preflight.targets, environment, signal);
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
      return await this.deliverAnswer(job, startedAt, preflight.targets, result.text, result.answeredBy);
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
    signal?: AbortSignal,
  ): Promise<JobRunReport> {
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
    return this.deliverAnswer(job, startedAt, targets, output, null);
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
  ): Promise<JobRunReport> {
    if (isSilentResponse(text)) {
      return this.finish(job, startedAt, { status: 'ok' }, { response: text, answeredBy });
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
