/**
 * The agent's part of a webhook run: a fresh unattended session on the rendered prompt, with the
 * route's toolsets and the first of its skills found (the webhook skills policy, RunContexts),
 * and its answer recorded before anything is delivered, so that a crash from then on redoes only
 * the delivery. A run still going after RUNNING_RECORD_AFTER_MS shows as running, with its
 * prompt, until it ends.
 */
import { inject, injectable } from 'inversify';
import { coalescedPrompt } from '../../domain/webhook/coalesce.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import type { WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import type { TranscriptOwner } from '../ports/RunLedger.js';
import { AgentRunError, spendOf, type AgentRunner, type AgentRunResult, type RunSpend } from '../ports/AgentRunner.js';
import type { Logger } from '../ports/Logger.js';
import type { WebhookWorkerSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { RunContexts } from '../runs/RunContexts.js';
import { RunStops, webhookRunKey } from '../runs/RunStops.js';
import { runStopOf } from '../../domain/runs/runStops.js';
import { retryWaitMs } from '../../domain/retries.js';
import { formatDuration } from '../../domain/durations.js';
import { attemptRunId, failedAttemptRunOf } from '../../domain/webhook/webhookLedgerRun.js';
import { isConfigBlock, runFailureMessage, WORKER_STOPPED } from '../runs/runErrors.js';
import type { WebhookRunReport } from './webhookRunReport.js';
import { WebhookRunRecorder } from './WebhookRunRecorder.js';

/** Writes the run record's changes (and the ledger's entry); false when the run record could not take them. */
export type NoteRun = (changes: Partial<WebhookRunRecord>, synced?: boolean, answeredBy?: string) => Promise<boolean>;

/** Asks the agent for webhook runs' answers. */
@injectable()
export class WebhookAgentStep {
  constructor(
    @inject(TOKENS.AgentRunner) private readonly agent: AgentRunner,
    @inject(RunContexts) private readonly contexts: RunContexts,
    @inject(TOKENS.WebhookWorkerSettings) private readonly settings: WebhookWorkerSettings,
    @inject(WebhookRunRecorder) private readonly recorder: WebhookRunRecorder,
    @inject(TOKENS.Logger) private readonly log: Logger,
    /** The route's time limit and the run's cancel. */
    @inject(RunStops) private readonly stops: RunStops,
  ) {}

  /**
   * Runs the agent on the rendered prompt and records its answer (through `note`). Returns the
   * answer and whether it was recorded, or the report of a run that failed or was stopped.
   */
  async ask(
    route: WebhookRoute,
    event: WebhookEvent,
    note: NoteRun,
    about: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<WebhookRunReport | { answer: string; recorded: boolean }> {
    this.log.debug(`running webhook event ${event.event} on route '${route.name}'`, about);
    const prompt = coalescedPrompt(route, event);
    const shownRunning = this.recorder.later(() => note({ prompt }));
    let answer: string;
    let answeredBy: string;
    let spent: Partial<WebhookRunRecord>;
    const guard = this.stops.guard(webhookRunKey(event.id), route.timeoutSeconds, signal);
    const transcript = this.recorder.ledger.transcriptProgress(this.transcriptOwner(event));
    try {
      const result = await this.runAttempts(route, event, prompt, note, about, guard.signal, transcript.grew);
      ({ text: answer, answeredBy } = result);
      spent = spentFields(result.usage ? { usage: result.usage, costUsd: result.costUsd ?? null } : null);
      await transcript.final(result.transcript);
    } catch (error) {
      await shownRunning.stop('answered');
      await transcript.final(error instanceof AgentRunError ? error.transcript : undefined);
      const failedSpend = spentFields(spendOf(error));
      const stop = runStopOf(guard.signal);
      if (stop) {
        // Its own ending, not the worker's: the event is not run again.
        this.log.error(`webhook run on route '${route.name}' failed: ${stop.message}`, about);
        await note({ prompt, outcome: 'run_failed', error: stop.message, ...failedSpend });
        return { status: 'run_failed', error: stop.message };
      }
      if (signal?.aborted) {
        await note({ prompt, outcome: 'abandoned', error: WORKER_STOPPED, ...failedSpend });
        return { status: 'abandoned', error: WORKER_STOPPED };
      }
      const message = runFailureMessage(error);
      if (isConfigBlock(error)) {
        this.log.error(`webhook run on route '${route.name}' was not run: ${message}`, about);
        await note({ prompt, outcome: 'not_run', error: message });
        return { status: 'not_run', error: message };
      }
      this.log.error(`webhook run on route '${route.name}' failed: ${message}`, about);
      await note({ prompt, outcome: 'run_failed', error: message, ...failedSpend });
      return { status: 'run_failed', error: message };
    } finally {
      guard.release();
    }
    await shownRunning.stop('answered');
    return { answer, recorded: await note({ prompt, outcome: 'answered', answer, ...spent }, true, answeredBy) };
  }

  /** Where the event's run keeps its transcript, in the run ledger beside its record (docs/runs.md, Transcripts). */
  private transcriptOwner(event: WebhookEvent): TranscriptOwner {
    return { id: event.id, kind: 'webhook', subject: event.route, started_at: this.recorder.ledger.now().toISOString() };
  }

  /**
   * The agent's run, and as many more as the route's `retry` allows while it fails for a reason
   * that may pass (docs/runs.md, Retries): each failed attempt gets a ledger record of its own, and
   * the event waits in its run slot, still claimed. A restart meanwhile runs the event again from
   * the attempt after the last one recorded, once its wait is over (resumedAttempt).
   */
  private async runAttempts(
    route: WebhookRoute,
    event: WebhookEvent,
    prompt: string,
    note: NoteRun,
    about: Record<string, string>,
    signal: AbortSignal,
    onTranscript: (transcript: RunTranscript) => void,
  ): Promise<AgentRunResult> {
    const resumed = await this.resumedAttempt(route, event);
    if (resumed) {
      this.log.info(`webhook run on route '${route.name}' goes on with attempt ${resumed.attempt}`, about);
      await note({ prompt, attempt: resumed.attempt, retryOf: attemptRunId(event.id, 1) });
      await this.stops.pause(resumed.waitMs, signal);
    }
    for (let attempt = resumed?.attempt ?? 1; ; attempt += 1) {
      const startedAt = this.recorder.ledger.now();
      try {
        return await this.run(route, prompt, signal, onTranscript);
      } catch (error) {
        const policy = route.retry;
        const retryable = error instanceof AgentRunError && error.transient && !signal.aborted;
        if (!retryable || !policy || attempt > policy.times) throw error;
        const message = runFailureMessage(error);
        const waitMs = retryWaitMs(policy, attempt, Math.random());
        await this.recorder.ledger.save(failedAttemptRunOf(event, attempt, prompt, message, startedAt, this.recorder.ledger.now()), about);
        this.log.warn(
          `webhook run on route '${route.name}' failed (${message}); attempt ${attempt + 1} in ${formatDuration(waitMs / 1000)}`,
          about,
        );
        await note({ prompt, attempt: attempt + 1, retryOf: attemptRunId(event.id, 1) });
        await this.stops.pause(waitMs, signal);
        if (signal.aborted) throw error;
      }
    }
  }

  /**
   * The attempt an event run again after a restart goes on with: the one after the last failed
   * attempt its ledger has (`<event id>~N`), and what is left of that attempt's wait; null for a
   * first run, or a route without retries.
   */
  private async resumedAttempt(route: WebhookRoute, event: WebhookEvent): Promise<{ attempt: number; waitMs: number } | null> {
    const policy = route.retry;
    if (!policy) return null;
    let last: { attempt: number; finishedAt: number } | null = null;
    for (let attempt = 1; attempt <= policy.times; attempt += 1) {
      const record = await this.recorder.ledger.find(attemptRunId(event.id, attempt));
      if (!record?.finished_at) break;
      last = { attempt, finishedAt: Date.parse(record.finished_at) };
    }
    if (!last) return null;
    const due = last.finishedAt + retryWaitMs(policy, last.attempt, Math.random());
    return { attempt: last.attempt + 1, waitMs: Math.max(0, due - this.recorder.ledger.now().getTime()) };
  }

  private async run(
    route: WebhookRoute,
    prompt: string,
    signal: AbortSignal,
    onTranscript: (transcript: RunTranscript) => void,
  ): Promise<AgentRunResult> {
    const context = await this.contexts.forWebhook({ label: `route '${route.name}'` }, route.skills, prompt);
    const result = await this.agent.run({
      context,
      selection: this.settings.defaultModel,
      toolsets: route.toolsets,
      idleTimeoutMs: this.settings.idleTimeoutMs,
      unattended: true,
      privateNetworks: route.allowPrivateNetworks,
      signal,
      onTranscript,
      ...(route.budget ? { budget: route.budget } : {}),
    });
    return result;
  }
}

/** The run record's fields of what a run spent; none when nothing was counted. */
function spentFields(spend: RunSpend | null): Partial<WebhookRunRecord> {
  return spend ? { usage: spend.usage, costUsd: spend.costUsd } : {};
}
