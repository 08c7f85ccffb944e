/**
 * Where every run kind's answer goes (docs/architecture.md, The run pipeline): targets in, how it
 * went to each (RunDelivery) out. A chat platform with its splitting and retries, a bot-chat
 * mailbox, the log (or the answer log), a pull-request comment; the output file is the cron run's
 * own and gets no entry here. Notices (a failure, a recovery, a pause) go to the platforms among
 * the targets, best effort. Nothing here throws: a target that fails is an entry that says why.
 */
import { inject, injectable, optional } from 'inversify';
import { botChatMessage } from '../../domain/botChat.js';
import { describeTarget, type DeliveryTarget, type PlatformTarget } from '../../domain/DeliveryTarget.js';
import { errorText } from '../../domain/errors.js';
import type { RunDelivery } from '../../domain/runs/RunRecord.js';
import type { AnswerLog } from '../ports/AnswerLog.js';
import type { BotChatDelivery } from '../ports/BotChatDelivery.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { Logger } from '../ports/Logger.js';
import type { RepoCommenter } from '../ports/RepoCommenter.js';
import { NO_TRACING, type RunTracing } from '../ports/RunTracing.js';
import { TOKENS } from '../ports/tokens.js';
import { deliveryError, deliveryReason } from './runErrors.js';
import type { RunOwner } from './RunContexts.js';

/** Where an answer can go: a job's targets, and a webhook route's log and pull-request comments. */
export type AnswerTarget = DeliveryTarget | { kind: 'log' } | { kind: 'repo_comment'; repo: string; prNumber: number };

/** Whose answer it is: what a bot-chat mailbox, the answer log and a failure's wording need. */
export type AnswerFrom =
  | {
      kind: 'cron';
      job: { id: string; name: string };
      /** The run's bot-chat execution id, the same after a restart. */
      executionId: string;
      /** The text platforms get, when it is not the answer itself (`cron.wrap_response`). */
      platformText?: string;
    }
  | {
      kind: 'webhook';
      route: string;
      about: Record<string, string>;
      /** Where an answer to `log` goes (`agent webhook redeliver`); without it, this process's log (the gateway's own run). */
      answerLog?: AnswerLog | null;
    }
  /** A chat turn's answer, back in its conversation (`telegram:123`). */
  | { kind: 'chat'; conversation: string };

/** How the answer went to one target; `loggedTo` names the log an answer to `log` went to. */
export type AnswerSent = RunDelivery & { reason?: string; loggedTo?: string };

/** The lane a target's delivery waits in: its platform's (shared by cron and webhook answers), or its kind's. */
export function laneOf(target: AnswerTarget): string {
  return target.kind === 'platform' ? `platform:${target.platform}` : target.kind;
}

/** How a target is named in a record and a sentence (`telegram:-100123`, `the log`, `octo/widgets#12`). */
export function describeAnswerTarget(target: AnswerTarget): string {
  if (target.kind === 'log') return 'the log';
  if (target.kind === 'repo_comment') return `${target.repo}#${target.prNumber}`;
  return describeTarget(target);
}

/** The gateway log's entry of a webhook answer delivered to `log`. */
export function logAnswer(log: Logger, route: string, text: string, about: Record<string, string>): void {
  log.info(`webhook answer on route '${route}':\n${text}`, about);
}

/** Delivers answers and notices. */
@injectable()
export class AnswerDelivery {
  constructor(
    @inject(TOKENS.DeliveryChannel) private readonly channel: DeliveryChannel,
    @inject(TOKENS.BotChatDelivery) @optional() private readonly botChat: BotChatDelivery | null,
    @inject(TOKENS.RepoCommenter) @optional() private readonly commenter: RepoCommenter | null,
    @inject(TOKENS.Logger) private readonly log: Logger,
    /** A span per target's delivery, in the trace of the run under way (docs/traces.md). */
    @inject(TOKENS.RunTracing) @optional() private readonly tracing: RunTracing = NO_TRACING,
  ) {}

  /**
   * Sends `text` to each target, in order, and says how it went to each. Targets that are only
   * the output file (`local`, and `origin` or `all` left unresolved) get no entry. Never throws.
   */
  async send(targets: readonly AnswerTarget[], text: string, from: AnswerFrom): Promise<AnswerSent[]> {
    const sent: AnswerSent[] = [];
    for (const target of targets) {
      // Only the output file: nothing is sent, and no span says otherwise.
      if (target.kind === 'local' || target.kind === 'origin' || target.kind === 'all') continue;
      const where = describeAnswerTarget(target);
      const step = { kind: 'delivery', target: where, platform: target.kind === 'platform' ? target.platform : null } as const;
      const entry = await this.tracing.step(step, async (span) => {
        const done = await this.attempt(target, where, text, from);
        span.note({ outcome: done.outcome, messageIds: done.message_ids, error: done.error });
        return done;
      });
      sent.push(entry);
    }
    return sent;
  }

  /** One delivery to one target, and how it went; never throws. */
  private async attempt(target: AnswerTarget, where: string, text: string, from: AnswerFrom): Promise<AnswerSent> {
    try {
      const entry = await this.sendTo(target, text, from);
      return { target: where, error: null, ...entry! };
    } catch (error) {
      const reason = deliveryReason(error);
      return { target: where, outcome: 'failed', message_ids: [], error: deliveryError(from.kind, where, reason), reason };
    }
  }

  /** Best effort: a notice goes to each platform among `targets`; one that cannot be sent is only logged. */
  async notify(targets: readonly AnswerTarget[], text: string, what: string, owner: RunOwner): Promise<void> {
    const platforms = targets.filter((target): target is PlatformTarget => target.kind === 'platform');
    for (const target of platforms) {
      try {
        await this.channel.deliver(target, text);
      } catch (error) {
        this.log.warn(`could not send the ${what} of ${owner.label}`, { ...owner.about, error: errorText(error) });
      }
    }
  }

  private async sendTo(
    target: AnswerTarget,
    text: string,
    from: AnswerFrom,
  ): Promise<Pick<AnswerSent, 'outcome' | 'message_ids' | 'loggedTo'> | null> {
    switch (target.kind) {
      case 'local':
      case 'origin':
      case 'all':
        return null;
      case 'platform': {
        const message = from.kind === 'cron' ? (from.platformText ?? text) : text;
        return { outcome: 'delivered', message_ids: (await this.channel.deliver(target, message)).messageIds };
      }
      case 'bot-chat': {
        if (from.kind !== 'cron' || this.botChat === null) throw new Error('bot-chat takes only the answers of jobs');
        const receipt = await this.botChat.deliver({
          profile: target.profile,
          jobId: from.job.id,
          jobName: from.job.name,
          executionId: from.executionId,
          message: botChatMessage(from.job.name, text),
        });
        return { outcome: receipt.lane === 'queued' ? 'queued' : 'delivered', message_ids: [receipt.receipt] };
      }
      case 'log': {
        const route = from.kind === 'webhook' ? from.route : from.kind === 'cron' ? from.job.name : from.conversation;
        const about = from.kind === 'webhook' ? from.about : from.kind === 'cron' ? { job: from.job.id } : {};
        const answerLog = from.kind === 'webhook' ? from.answerLog : null;
        if (answerLog) return { outcome: 'delivered', message_ids: [], loggedTo: await answerLog.write(route, text, about) };
        logAnswer(this.log, route, text, about);
        return { outcome: 'delivered', message_ids: [] };
      }
      case 'repo_comment':
        if (this.commenter === null) throw new Error('no code host is configured to comment on pull requests');
        await this.commenter.comment({ repo: target.repo, prNumber: target.prNumber, body: text });
        return { outcome: 'delivered', message_ids: [] };
    }
  }
}
