import { inject, injectable, optional } from 'inversify';
import type { ContextDocument } from '../../domain/RunContext.js';
import { webhookPrompt } from '../../domain/webhook/promptTemplate.js';
import type { WebhookEvent } from '../../domain/webhook/WebhookEvent.js';
import { AGENT_NOT_RUN, isFinalOutcome, type WebhookRunRecord } from '../../domain/webhook/webhookRunRecord.js';
import type { WebhookRoute } from '../../domain/webhook/WebhookRoute.js';
import {
  buildWebhookRunContext,
  describeWebhookDelivery,
  planWebhookDelivery,
  type WebhookDelivery,
} from '../../domain/webhook/webhookRun.js';
import type { AgentRunner } from '../ports/AgentRunner.js';
import type { Clock } from '../ports/Clock.js';
import type { MemoryStore, SkillLibrary } from '../ports/ContextFiles.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { Logger } from '../ports/Logger.js';
import type { Timer } from '../ports/Timer.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { NO_METRICS, type Metrics } from '../ports/Metrics.js';
import type { RepoCommenter } from '../ports/RepoCommenter.js';
import type { WebhookWorkerSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import type { WebhookRoutes } from '../ports/WebhookRoutes.js';
import type { WebhookRunRecords } from '../ports/WebhookRunRecords.js';
import { deliverWebhookAnswer, laneOfDelivery } from './webhookAnswerDelivery.js';
import { runFailureMessage, unexpectedFailureMessage, WORKER_STOPPED } from './webhookRunErrors.js';
import { WebhookRunRecorder } from './WebhookRunRecorder.js';

/**
 * How one event ended:
 * - `delivered` — the agent answered and the answer reached the route's target;
 * - `delivery_failed` — the agent answered, the delivery did not get through;
 * - `run_failed` — the agent run failed;
 * - `not_run` — nothing was spent: the route is gone, no model is usable, or the delivery
 *   cannot be resolved (a `repo_comment` without `owner/name` and a PR number, an unconfigured
 *   platform);
 * - `abandoned` — the run was aborted because the worker is stopping; the event is to be run
 *   again after the restart.
 */
export type WebhookRunStatus = 'delivered' | 'delivery_failed' | 'run_failed' | 'not_run' | 'abandoned';

export interface WebhookRunReport {
  status: WebhookRunStatus;
  /** The sentence logged for every status but `delivered`. */
  error: string | null;
  /** The platform's message ids of a delivered answer; empty for the log and code-host comments. */
  messageIds?: string[];
}

/**
 * An event whose answer is recorded and whose delivery is still to be made: small, since the
 * answer stays in its run record until the delivery reads it.
 */
export interface PendingWebhookDelivery {
  event: Pick<WebhookEvent, 'id' | 'route' | 'event' | 'deliveryId' | 'receivedAt'>;
  route: WebhookRoute;
  delivery: WebhookDelivery;
  /**
   * Deliveries that wait for one another: one lane per platform (`platform:telegram`), one for
   * the code host's comments, one for the log. A slow platform holds up only its own lane.
   */
  lane: string;
  /** When the run started (ms), for the run's duration. */
  startedAtMs: number;
  /** The model that answered; null when not known (an answer recorded before a restart). */
  model: string | null;
  /** The answer itself, only when its run record could not be written to hold it. */
  unrecordedAnswer?: string;
  /**
   * The run's entry in the run ledger while the delivery waits: written only once the delivery
   * has waited RUNNING_RECORD_AFTER_MS, so that an answer delivered at once is written to the
   * ledger once, with its outcome. Stopped (and awaited) before the final entry is written.
   */
  shownInLedger?: { stop: AbortController; written: Promise<void> };
}

/** The end of the agent's part of a run: a final report, or an answer waiting for its delivery. */
export type WebhookAnswerOutcome = { report: WebhookRunReport; pending: null } | { report: null; pending: PendingWebhookDelivery };

/**
 * The run path of one accepted webhook event (docs/webhooks.md): resolve the route and its
 * delivery, render the prompt, load the first skill found, run a fresh unattended session with the
 * route's toolsets, deliver the answer (an empty one too). Every ending is logged; it never
 * throws.
 *
 * Every run is recorded (WebhookRunRecords), and the answer is recorded before it is delivered.
 * An event run again after a crash or a stop is looked up first: an answer already recorded is
 * only delivered, never asked for again, and an event whose run had ended is not repeated.
 */
@injectable()
export class WebhookEventExecution {
  private readonly recorder: WebhookRunRecorder;

  constructor(
    @inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes,
    @inject(TOKENS.AgentRunner) private readonly agent: AgentRunner,
    @inject(TOKENS.MemoryStore) private readonly memory: MemoryStore,
    @inject(TOKENS.SkillLibrary) private readonly skills: SkillLibrary,
    @inject(TOKENS.DeliveryChannel) private readonly channel: DeliveryChannel,
    @inject(TOKENS.RepoCommenter) private readonly commenter: RepoCommenter,
    @inject(TOKENS.WebhookWorkerSettings) private readonly settings: WebhookWorkerSettings,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.WebhookRunRecords) records: WebhookRunRecords,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Timer) timer: Timer,
    @inject(TOKENS.RunLedger) ledger: RunLedger,
    @inject(TOKENS.Metrics) @optional() private readonly metrics: Metrics = NO_METRICS,
  ) {
    this.recorder = new WebhookRunRecorder(records, ledger, log, clock, timer);
  }

  /** The whole run: the agent's answer, then its delivery. */
  async run(event: WebhookEvent, signal?: AbortSignal): Promise<WebhookRunReport> {
    const answered = await this.answer(event, signal);
    return answered.pending ? this.deliverAnswer(answered.pending) : answered.report;
  }

  /**
   * The agent's part of the run, up to its answer recorded (synced) in the run record: the answer
   * then waits for {@link deliverAnswer}, which the gateway's worker calls in the platform's lane,
   * so that no run slot waits for a platform. Every other ending is final and reported.
   */
  async answer(event: WebhookEvent, signal?: AbortSignal): Promise<WebhookAnswerOutcome> {
    const startedAtMs = this.clock.now().getTime();
    const outcome = await this.answerOnce(event, startedAtMs, signal);
    if (outcome.report) this.metrics.runFinished('webhook', outcome.report.status, (this.clock.now().getTime() - startedAtMs) / 1000);
    return outcome;
  }

  /**
   * Delivers the recorded answer of `pending` (an empty one as a notice) and records how it went.
   * Never throws; an answer that cannot be read back is a failed delivery.
   */
  async deliverAnswer(pending: PendingWebhookDelivery): Promise<WebhookRunReport> {
    const { event, route, delivery } = pending;
    const about = aboutEvent(event);
    let report: WebhookRunReport;
    if (pending.shownInLedger) {
      pending.shownInLedger.stop.abort('delivering');
      await pending.shownInLedger.written;
    }
    const record = await this.recorder.read(event, about);
    const answer = pending.unrecordedAnswer ?? record?.answer ?? null;
    if (answer === null) {
      const message = `delivery to ${describeWebhookDelivery(delivery)} failed: the recorded answer could not be read back`;
      this.log.error(`webhook ${message}`, about);
      report = { status: 'delivery_failed', error: message };
    } else {
      report = await deliverWebhookAnswer(
        { channel: this.channel, commenter: this.commenter, log: this.log },
        route.name,
        delivery,
        answer,
        about,
      );
      if (record)
        await this.recorder.save(
          { ...record, outcome: report.status, error: report.error },
          about,
          false,
          pending.model,
          report.messageIds ?? [],
        );
    }
    this.metrics.runFinished('webhook', report.status, (this.clock.now().getTime() - pending.startedAtMs) / 1000);
    return report;
  }

  private async answerOnce(event: WebhookEvent, startedAtMs: number, signal?: AbortSignal): Promise<WebhookAnswerOutcome> {
    const final = (report: WebhookRunReport): WebhookAnswerOutcome => ({ report, pending: null });
    const about = aboutEvent(event);
    // An event handed out for the first time since this process accepted it has no earlier record to find.
    const previous = event.resumed === false ? null : await this.recorder.read(event, about);
    let record: WebhookRunRecord = previous ?? {
      eventId: event.id,
      route: event.route,
      event: event.event,
      deliveryId: event.deliveryId,
      receivedAt: event.receivedAt,
      startedAt: this.clock.now().toISOString(),
      outcome: 'running',
      deliveredTo: null,
      prompt: null,
      answer: null,
      error: null,
    };
    // Only the answer is saved synced: it is what a restart must find before delivering again.
    // The rest shows progress; the inbox's done record is what keeps an ended event from running again.
    let model: string | null = null;
    const note = async (changes: Partial<WebhookRunRecord>, synced = false, answeredBy?: string): Promise<boolean> => {
      record = { ...record, ...changes };
      if (answeredBy !== undefined) model = answeredBy;
      // An answer waiting for its delivery reaches the ledger with the delivery's outcome, or
      // once the delivery has waited a while (pendingOf).
      return this.recorder.save(record, about, synced, model, [], record.outcome !== 'answered');
    };
    const pendingOf = (route: WebhookRoute, delivery: WebhookDelivery, unrecordedAnswer?: string): WebhookAnswerOutcome => {
      const pending: PendingWebhookDelivery = { event: idsOf(event), route, delivery, lane: laneOfDelivery(delivery), startedAtMs, model };
      if (unrecordedAnswer !== undefined) {
        // Not in its run record: the ledger is what shows it while it waits.
        void this.recorder.toLedger(record, about, model, []);
        return { report: null, pending: { ...pending, unrecordedAnswer } };
      }
      return { report: null, pending: { ...pending, shownInLedger: this.recorder.showInLedgerLater(pending.event, pending.model, about) } };
    };
    try {
      if (previous && isFinalOutcome(previous.outcome)) {
        this.log.info(`webhook event ${event.id} had already ended (${previous.outcome}) before the restart; it is not run again`, about);
        return final({ status: previous.outcome as WebhookRunStatus, error: previous.error });
      }
      const prepared = await this.prepare(event);
      if ('error' in prepared) {
        this.log.error(`webhook event not run: ${prepared.error}`, about);
        await note({ outcome: 'not_run', error: prepared.error });
        return final({ status: 'not_run', error: prepared.error });
      }
      const { route, delivery } = prepared;
      if (previous?.answer != null) {
        this.log.info(
          `webhook event ${event.id} was answered before the gateway stopped; delivering that answer without running the agent again`,
          about,
        );
        await note({ outcome: 'answered', deliveredTo: describeWebhookDelivery(delivery), error: null });
      } else if (route.deliverOnly) {
        // The rendered prompt is the message: nothing is asked of a model.
        const message = webhookPrompt(route, event.event, event.payload);
        this.log.info(
          `webhook event ${event.id} on route '${route.name}' is delivered as its rendered prompt, without running the agent (deliver_only)`,
          about,
        );
        const recorded = await note(
          {
            outcome: 'answered',
            deliveredTo: describeWebhookDelivery(delivery),
            prompt: message,
            answer: message,
            agent: AGENT_NOT_RUN,
            error: null,
          },
          true,
        );
        if (!recorded) return pendingOf(route, delivery, message);
      } else {
        // Saved with the prompt, once it is rendered.
        record = { ...record, outcome: 'running', deliveredTo: describeWebhookDelivery(delivery), error: null };
        const asked = await this.askAgent(route, event, note, about, signal);
        if ('status' in asked) return final(asked);
        if (!asked.recorded) return pendingOf(route, delivery, asked.answer);
      }
      return pendingOf(route, delivery);
    } catch (error) {
      // A port that broke its promise not to throw (a skill file that cannot be read …).
      const message = unexpectedFailureMessage(error);
      this.log.error(message, about);
      await note({ outcome: 'run_failed', error: message });
      return final({ status: 'run_failed', error: message });
    }
  }

  /**
   * Runs the agent on the rendered prompt and records its answer before anything is delivered,
   * so that a crash from then on redoes only the delivery. Returns the answer and whether it was
   * recorded, or the report of a run that failed or was stopped.
   */
  private async askAgent(
    route: WebhookRoute,
    event: WebhookEvent,
    note: (changes: Partial<WebhookRunRecord>, synced?: boolean, answeredBy?: string) => Promise<boolean>,
    about: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<WebhookRunReport | { answer: string; recorded: boolean }> {
    this.log.debug(`running webhook event ${event.event} on route '${route.name}'`, about);
    const prompt = webhookPrompt(route, event.event, event.payload);
    // A run that answers at once is recorded once, with its answer; one still going after
    // RUNNING_RECORD_AFTER_MS shows as running, with its prompt, until then.
    const shownRunning = this.recorder.later(() => note({ prompt }));
    let answer: string;
    let answeredBy: string;
    try {
      ({ text: answer, answeredBy } = await this.runAgent(route, prompt, signal));
    } catch (error) {
      shownRunning.stop.abort('answered');
      await shownRunning.written;
      if (signal?.aborted) {
        const stopped = WORKER_STOPPED;
        await note({ prompt, outcome: 'abandoned', error: stopped });
        return { status: 'abandoned', error: stopped };
      }
      const message = runFailureMessage(error);
      this.log.error(`webhook run on route '${route.name}' failed: ${message}`, about);
      await note({ prompt, outcome: 'run_failed', error: message });
      return { status: 'run_failed', error: message };
    }
    shownRunning.stop.abort('answered');
    await shownRunning.written;
    return { answer, recorded: await note({ prompt, outcome: 'answered', answer }, true, answeredBy) };
  }

  /** Everything that can be checked before a token is spent. */
  private async prepare(event: WebhookEvent): Promise<{ route: WebhookRoute; delivery: WebhookDelivery } | { error: string }> {
    const route = await this.routes.find(event.route);
    if (route === null) return { error: `the route '${event.route}' no longer exists` };
    const modelProblem = this.agent.problemWith(this.settings.defaultModel);
    if (modelProblem) return { error: modelProblem };
    const plan = planWebhookDelivery(route, event.payload);
    if (!plan.ok) return { error: `route '${route.name}' cannot deliver with ${route.deliver}: ${plan.error}` };
    if (plan.delivery.kind === 'platform') {
      const problem = this.channel.problemWith(plan.delivery.target);
      if (problem) return { error: `route '${route.name}' cannot deliver: ${problem}` };
    }
    return { route, delivery: plan.delivery };
  }

  private async runAgent(route: WebhookRoute, prompt: string, signal?: AbortSignal): Promise<{ text: string; answeredBy: string }> {
    const context = buildWebhookRunContext({
      memories: await this.memory.load(),
      skill: await this.firstSkillFound(route),
      prompt,
    });
    const result = await this.agent.run({
      context,
      selection: this.settings.defaultModel,
      toolsets: route.toolsets,
      idleTimeoutMs: this.settings.idleTimeoutMs,
      unattended: true,
      privateNetworks: route.allowPrivateNetworks,
      signal,
    });
    return { text: result.text, answeredBy: result.answeredBy };
  }

  /** Only the first skill of the list that exists is loaded; the rest are ignored. */
  private async firstSkillFound(route: WebhookRoute): Promise<ContextDocument | null> {
    for (const name of route.skills) {
      const content = await this.skills.find(name);
      if (content !== null) return { name, content };
    }
    if (route.skills.length > 0) {
      this.log.warn(`none of the skills of route '${route.name}' was found (${route.skills.join(', ')}); running without one`);
    }
    return null;
  }
}

function aboutEvent(event: Pick<WebhookEvent, 'id' | 'route' | 'event' | 'deliveryId'>): Record<string, string> {
  return { event_id: event.id, route: event.route, event: event.event, delivery_id: event.deliveryId };
}

/** What a waiting delivery keeps of its event: not the payload. */
function idsOf(event: WebhookEvent): PendingWebhookDelivery['event'] {
  return { id: event.id, route: event.route, event: event.event, deliveryId: event.deliveryId, receivedAt: event.receivedAt };
}
