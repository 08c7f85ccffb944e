import { inject, injectable, optional } from 'inversify';
import { DailyBudgets } from '../runs/DailyBudgets.js';
import { describeTarget, parseDeliveryTargets, type DeliveryTarget } from '../../domain/DeliveryTarget.js';
import { errorText } from '../../domain/errors.js';
import type { Job } from '../../domain/Job.js';
import { chooseModel } from '../../domain/modelChoice.js';
import type { AgentRunner, ModelSelection } from '../ports/AgentRunner.js';
import type { BotChatDelivery } from '../ports/BotChatDelivery.js';
import type { DeliveryChannel } from '../ports/DeliveryChannel.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { JobFileChecks } from './JobFileChecks.js';

export type Preflight =
  | { ok: true; targets: DeliveryTarget[] }
  | {
      ok: false;
      error: string;
      targets: DeliveryTarget[];
      /** Set when a daily cap keeps the run from starting: whether this is the first such run of the last 24 h (its notice goes out). */
      dailyBudget?: { firstToday: boolean };
    };

/**
 * Whether a job can run as it stands, spending nothing and contacting no platform:
 * its targets parse and their platforms are configured, its model resolves, its script is inside
 * the scripts directory, its working folder exists. The run path checks this before every run; `agent config check` asks it too.
 */
@injectable()
export class JobPreflight {
  constructor(
    @inject(TOKENS.JobRunAgentRunner) private readonly agent: AgentRunner,
    @inject(TOKENS.DeliveryChannel) private readonly channel: DeliveryChannel,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    @inject(TOKENS.BotChatDelivery) private readonly botChat: BotChatDelivery,
    @inject(JobFileChecks) private readonly files: JobFileChecks,
    /** Without it (tests that build the run path by hand), no daily cap holds. */
    @inject(DailyBudgets) @optional() private readonly daily: DailyBudgets | null = null,
  ) {}

  /** The model a run of this job uses: its own, else the configured default. */
  selectionFor(job: Job): ModelSelection {
    return chooseModel({ provider: job.provider, model: job.model }, this.settings.defaultModel);
  }

  /**
   * Every problem as one sentence each, joined; `targets` are those that can be delivered to
   * (`origin` and `all` resolved), so a failure notice can still reach them.
   */
  async check(job: Job): Promise<Preflight> {
    const resolved = await this.deliveryTargets(job);
    if ('error' in resolved) return { ok: false, error: resolved.error, targets: [] };
    const problems: string[] = [];
    // A job that runs only its script needs no model, but a script.
    const modelProblem = job.no_agent ? null : this.agent.problemWith(this.selectionFor(job));
    if (modelProblem) problems.push(modelProblem);
    if (job.no_agent && !job.script) {
      problems.push(
        `Job '${job.name}' runs without the agent but has no pre-run script; give it one with "agent cron edit --script", or let it run the agent with "agent cron edit --agent".`,
      );
    }
    problems.push(...resolved.problems.map((each) => each.problem));
    problems.push(...(await this.files.problems(job)));
    if (problems.length > 0) return { ok: false, error: problems.join(' '), targets: resolved.targets };
    return (await this.dailyBudget(job, resolved.targets)) ?? { ok: true, targets: resolved.targets };
  }

  /** A run past a daily cap (the job's `max_cost_per_day`, `agent.budget.max_cost_per_day`) does not start; null when none is reached. */
  private async dailyBudget(job: Job, targets: DeliveryTarget[]): Promise<Preflight | null> {
    if (this.daily === null || job.no_agent) return null;
    const owner = { kind: 'cron' as const, subject: job.id };
    const error = await this.daily.problemFor(owner, job.budget?.max_cost_per_day, this.settings.maxCostPerDay);
    if (error === null) return null;
    return { ok: false, error, targets, dailyBudget: { firstToday: !(await this.daily.blockedEarlierToday(owner)) } };
  }

  /**
   * The job's targets as a run delivers to them (`origin` and `all` resolved), those that can be
   * delivered to in `targets`, and a sentence for each that cannot (`target` as written, `all`
   * when it names no platform); `error` when the job's `deliver` does not parse.
   */
  async deliveryTargets(
    job: Job,
  ): Promise<{ targets: DeliveryTarget[]; problems: Array<{ target: string; problem: string }> } | { error: string }> {
    let targets: DeliveryTarget[];
    try {
      targets = parseDeliveryTargets(job.deliver).map((target) => resolveOrigin(job, target));
    } catch (error) {
      return { error: errorText(error) };
    }
    const problems: Array<{ target: string; problem: string }> = [];
    if (targets.some((target) => target.kind === 'all')) {
      const homes = this.channel.homeTargets();
      if (homes.length === 0)
        problems.push({ target: 'all', problem: 'The delivery target "all" names no platform: none is configured with a home channel.' });
      targets = targets.flatMap((target) => (target.kind === 'all' ? homes : [target]));
    }
    const deliverable: DeliveryTarget[] = [];
    for (const target of targets) {
      // bot-chat needs no credentials: only its profile must exist.
      const problem =
        target.kind === 'platform'
          ? this.channel.problemWith(target)
          : target.kind === 'bot-chat'
            ? await this.botChat.problemWith(target.profile)
            : null;
      if (problem) problems.push({ target: describeTarget(target), problem });
      else deliverable.push(target);
    }
    return { targets: deliverable, problems };
  }
}

/** `origin` is the chat that created the job; without one it behaves as `local`. */
function resolveOrigin(job: Job, target: DeliveryTarget): DeliveryTarget {
  if (target.kind !== 'origin') return target;
  if (!job.origin) return { kind: 'local' };
  if (job.origin.platform === 'bot-chat') return { kind: 'bot-chat', profile: job.origin.chat_id };
  return {
    kind: 'platform',
    platform: job.origin.platform,
    destination: job.origin.chat_id,
    threadId: job.origin.thread_id ?? null,
  };
}
