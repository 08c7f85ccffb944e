/**
 * The steps of a cron run between its preflight and its marking: the pre-run script, a fresh
 * agent session on the job's prompt (or the script alone, for a job without the agent), and the
 * answer delivered or handed on. Every ending is a report; nothing here throws.
 */
import { inject, injectable } from 'inversify';
import type { DeliveryTarget } from '../../domain/DeliveryTarget.js';
import type { Job } from '../../domain/Job.js';
import { chooseModel } from '../../domain/modelChoice.js';
import { scriptErrorBlock, scriptErrorText, scriptOutputBlock, scriptSaysSleep } from '../../domain/RunContext.js';
import type { RunOutcome } from '../../domain/RunOutcome.js';
import { cronRunToolsets } from '../../domain/toolsets.js';
import { CRON_RUN_VARIABLE } from '../../domain/cronRunGuard.js';
import { errorText } from '../../domain/errors.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import { runStopOf } from '../../domain/runs/runStops.js';
import { AgentRunError, spendOf, type AgentRunner, type ModelSelection } from '../ports/AgentRunner.js';
import type { Logger } from '../ports/Logger.js';
import type { ScriptExecutor } from '../ports/ScriptExecutor.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { RunContexts } from '../runs/RunContexts.js';
import { chainTriggerOfRun } from '../../domain/jobChains.js';
import {
  interruptedError,
  isConfigBlock,
  isUnexpectedFailure,
  RUN_CANCELLED,
  runFailureMessage,
  scriptProblem,
} from '../runs/runErrors.js';
import { JobAnswers, ownerOf, type AnswerToDeliver } from './JobAnswers.js';
import type { Preflight } from './JobPreflight.js';
import { withSpend, type JobRunReport, type JobRunReports } from './JobRunReports.js';

/** How a run's steps ended, and the agent's transcript when a session kept one (docs/runs.md, Transcripts). */
export type StepsEnded = (JobRunReport | AnswerToDeliver) & { transcript?: RunTranscript };

/** Runs the steps of cron runs. */
@injectable()
export class JobRunSteps {
  private readonly reports: JobRunReports;

  constructor(
    @inject(TOKENS.JobRunAgentRunner) private readonly agent: AgentRunner,
    @inject(RunContexts) private readonly contexts: RunContexts,
    @inject(TOKENS.ScriptExecutor) private readonly scripts: ScriptExecutor,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    /** The answers and notices of runs; JobExecution delivers through it an answer the ledger could not keep. */
    @inject(JobAnswers) readonly answers: JobAnswers,
  ) {
    this.reports = answers.reports;
  }

  /**
   * The run of `job` as its preflight found it: a job that cannot run is `blocked_config`;
   * otherwise its script, its agent and its answer. `signal` cancels it.
   */
  async execute(
    job: Job,
    startedAt: Date,
    preflight: Preflight,
    signal: AbortSignal | undefined,
    deliverLater: boolean,
    onTranscript?: (transcript: RunTranscript) => void,
  ): Promise<StepsEnded> {
    if (!preflight.ok) {
      const outcome: RunOutcome = { status: 'blocked_config', error: preflight.error };
      // A daily cap's notice goes out once a day, whatever the failure streak.
      if (preflight.dailyBudget)
        await this.answers.notifyDailyBudget(job, preflight.targets, preflight.error, preflight.dailyBudget.firstToday);
      else await this.answers.notifyFailure(job, preflight.targets, preflight.error);
      return this.reports.write(job, startedAt, outcome, { error: preflight.error });
    }
    // Every process the run starts carries the job's id: from inside a run, job-changing commands refuse.
    const environment = { [CRON_RUN_VARIABLE]: job.id };
    let transcript: RunTranscript | undefined;
    const kept = (ended: JobRunReport | AnswerToDeliver): StepsEnded => (transcript ? { ...ended, transcript } : ended);
    try {
      if (job.no_agent) return await this.runScriptOnly(job, startedAt, preflight.targets, environment, signal, deliverLater);
      const scriptBlock = await this.runScript(job, environment, signal);
      if (scriptBlock === 'sleep') {
        return this.reports.write(job, startedAt, { status: 'ok' }, { response: '[SILENT] (the script asked not to wake the agent)' });
      }
      const context = await this.contexts.forCron(ownerOf(job), job.skills, job.prompt, scriptBlock, {
        workdir: job.workdir ?? null,
        contextFrom: job.context_from ?? [],
        continueOf: job.continue ? job.id : null,
        chainedFrom: chainTriggerOfRun(job),
      });
      const result = await this.agent.run({
        context,
        selection: this.selectionFor(job),
        // The job's own toolsets replace the preset; the recursion guard still removes the job tool.
        toolsets: cronRunToolsets(job.toolsets ?? undefined),
        ...(job.workdir ? { workingDirectory: job.workdir } : {}),
        idleTimeoutMs: this.settings.idleTimeoutMs,
        unattended: true,
        environment,
        signal,
        ...(onTranscript ? { onTranscript } : {}),
        ...(job.budget ? { budget: job.budget } : {}),
      });
      transcript = result.transcript;
      const spend = result.usage ? { usage: result.usage, costUsd: result.costUsd ?? null } : null;
      if (result.text.trim() === '') {
        const error = 'agent produced an empty response';
        await this.answers.notifyFailure(job, preflight.targets, error);
        return kept(
          withSpend(await this.reports.write(job, startedAt, { status: 'error', error }, { answeredBy: result.answeredBy }), spend),
        );
      }
      const answered = await this.answers.deliverAnswer(job, startedAt, preflight.targets, result.text, result.answeredBy, deliverLater);
      return kept('answered' in answered ? { answered: { ...answered.answered, spend } } : withSpend(answered, spend));
    } catch (error) {
      if (error instanceof AgentRunError) transcript ??= error.transcript;
      if (signal?.aborted) {
        const stop = runStopOf(signal);
        // A run past its time limit failed; a cancelled one was meant to stop, and a run the gateway's
        // shutdown cut short after its grace period gets no notice either.
        if (stop?.kind === 'timeout') await this.answers.notifyFailure(job, preflight.targets, stop.message);
        const stopped = stop?.message ?? interruptedError(signal);
        return kept(
          withSpend(await this.reports.write(job, startedAt, { status: 'error', error: stopped }, { error: stopped }), spendOf(error)),
        );
      }
      const message = runFailureMessage(error);
      if (isConfigBlock(error)) {
        await this.answers.notifyFailure(job, preflight.targets, message);
        return this.reports.write(job, startedAt, { status: 'blocked_config', error: message }, { error: message });
      }
      if (isUnexpectedFailure(error)) this.log.error('job run failed unexpectedly', { job: job.id, error: errorText(error) });
      // A failure that may pass may be retried: its notice waits for the last attempt (JobRunMarks).
      const retryable = error instanceof AgentRunError && error.transient;
      if (!retryable) await this.answers.notifyFailure(job, preflight.targets, message);
      const report = withSpend(
        await this.reports.write(job, startedAt, { status: 'error', error: message }, { error: message }),
        spendOf(error),
      );
      return kept(retryable ? { ...report, retryable } : report);
    }
  }

  /** The model a run of this job uses: its own, else the configured default (as JobPreflight checks it). */
  private selectionFor(job: Job): ModelSelection {
    return chooseModel({ provider: job.provider, model: job.model }, this.settings.defaultModel);
  }

  private scriptOptions(job: Job, environment: Record<string, string>, signal: AbortSignal | undefined) {
    return { timeoutMs: this.settings.scriptTimeoutMs, environment, signal, ...(job.workdir ? { workingDirectory: job.workdir } : {}) };
  }

  private async runScript(job: Job, environment: Record<string, string>, signal?: AbortSignal): Promise<string | 'sleep' | null> {
    if (!job.script) return null;
    const result = await this.scripts.run(job.script, this.scriptOptions(job, environment, signal));
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
    const result = await this.scripts.run(job.script, this.scriptOptions(job, environment, signal));
    if (signal?.aborted) throw new Error(RUN_CANCELLED);
    const problem = scriptProblem(result, this.settings.scriptTimeoutMs);
    if (problem !== null) {
      const error = scriptErrorText(problem, result.stderr);
      // A script that timed out may be retried: its notice waits for the last attempt (JobRunMarks).
      if (result.timedOut) return { ...(await this.reports.write(job, startedAt, { status: 'error', error }, { error })), retryable: true };
      await this.answers.notifyFailure(job, targets, error);
      return this.reports.write(job, startedAt, { status: 'error', error }, { error });
    }
    const output = result.stdout.trimEnd();
    if (output.trim() === '') return this.reports.write(job, startedAt, { status: 'ok' }, {});
    if (scriptSaysSleep(output)) return this.reports.write(job, startedAt, { status: 'ok' }, { response: output });
    return this.answers.deliverAnswer(job, startedAt, targets, output, null, deliverLater);
  }
}
