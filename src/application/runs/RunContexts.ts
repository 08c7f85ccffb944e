/**
 * What a fresh agent session is given, for every run kind (docs/architecture.md, The run
 * pipeline): the memory files, the skills its kind's policy loads, and the task. The skills
 * policy is named per kind in SKILLS_POLICY, so that a kind's choice is read in one place.
 */
import { inject, injectable } from 'inversify';
import { buildChatContext, buildRunContext, type CarriedAnswer, type ContextDocument, type RunContext } from '../../domain/RunContext.js';
import { buildWebhookRunContext } from '../../domain/webhook/webhookRun.js';
import { errorText } from '../../domain/errors.js';
import { followedRunDocument, type ChainTrigger, type FollowedRun } from '../../domain/jobChains.js';
import type { MemoryStore, SkillLibrary } from '../ports/ContextFiles.js';
import type { JobRepository } from '../ports/JobRepository.js';
import type { Logger } from '../ports/Logger.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';
import type { WorkingDirectories } from '../ports/WorkingDirectories.js';

/**
 * How a run kind loads the skills its job or route names:
 * - `every-named`: each one, in order; one not found is logged and becomes a note in the context;
 * - `first-found`: only the first of the list that exists (a route's list is its preferences);
 * - `none`: no skill (a chat turn carries the conversation instead).
 */
export type SkillsPolicy = 'every-named' | 'first-found' | 'none';

/** Each run kind's skills policy. */
export const SKILLS_POLICY = {
  cron: 'every-named',
  webhook: 'first-found',
  chat: 'none',
} as const satisfies Record<string, SkillsPolicy>;

/** Who a run is of, to name it in a log line: a job (`job 'nightly'`) or a route (`route 'github'`). */
export interface RunOwner {
  /** How a log line names it: `job 'nightly'`, `route 'github'`. */
  label: string;
  /** The fields a log line carries. */
  about?: Record<string, string>;
}

/**
 * What a cron run adds after its skills (docs/cron.md): its working folder's AGENTS.md, and
 * the last `ok` answers of the jobs it takes context from and, with `continueOf`, its own.
 */
export interface CronRunExtras {
  workdir?: string | null;
  contextFrom?: readonly string[];
  /** The job's own id, when its own last answer is carried forward (`continue`). */
  continueOf?: string | null;
  /** The followed job's run that started this run (a chain); null or absent for none. */
  chainedFrom?: ChainTrigger | null;
}

/** How many of a job's newest runs are looked at first for its last `ok` answer, before all it keeps. */
const FIRST_LOOK = 20;
const WHOLE_LOOK = 200;

/** Builds the context of each kind's runs. */
@injectable()
export class RunContexts {
  constructor(
    @inject(TOKENS.MemoryStore) private readonly memory: MemoryStore,
    @inject(TOKENS.SkillLibrary) private readonly skills: SkillLibrary,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.WorkingDirectories) private readonly workdirs: WorkingDirectories,
    @inject(TOKENS.JobRepository) private readonly jobs: JobRepository,
  ) {}

  /**
   * A cron run's context: memory, every named skill (one missing becomes a note), the working
   * folder's AGENTS.md, the answers carried forward, the script's block and the prompt.
   */
  async forCron(
    owner: RunOwner,
    skills: readonly string[],
    prompt: string,
    scriptBlock: string | null,
    extras: CronRunExtras = {},
  ): Promise<RunContext> {
    const instructions = extras.workdir ? await this.workdirs.instructions(extras.workdir) : null;
    const carriedFrom = [...(extras.contextFrom ?? []).map((id) => ({ id, own: false }))];
    if (extras.continueOf) carriedFrom.push({ id: extras.continueOf, own: true });
    return buildRunContext({
      memories: await this.memory.load(),
      skills: await this.everyNamed(owner, skills),
      prompt,
      scriptBlock,
      folderInstructions: extras.workdir && instructions !== null ? { folder: extras.workdir, content: instructions } : null,
      carried: await Promise.all(carriedFrom.map(({ id, own }) => this.lastAnswerOf(id, own))),
      followed: extras.chainedFrom ? followedRunDocument(await this.followedRun(extras.chainedFrom)) : null,
    });
  }

  /** The followed job's run that started a run, as the ledger keeps it (docs/cron.md, Chains). */
  private async followedRun(trigger: ChainTrigger): Promise<FollowedRun> {
    const job = await this.jobs.findById(trigger.job).catch(() => null);
    try {
      const run = await this.ledger.get(trigger.run_id);
      return { trigger, jobName: job?.name ?? run?.name ?? null, run: run ? { answer: run.answer, error: run.error } : null };
    } catch (error) {
      this.log.warn(
        `the run ${trigger.run_id} this run follows could not be read from the run ledger; the run goes on without its answer`,
        {
          job: trigger.job,
          error: errorText(error),
        },
      );
      return { trigger, jobName: job?.name ?? null, run: null };
    }
  }

  /** The newest `ok` run with an answer of job `jobId` in the ledger; a job whose runs are all gone has none. */
  private async lastAnswerOf(jobId: string, own: boolean): Promise<CarriedAnswer> {
    try {
      // A job removed since it was named carries nothing, whatever of its runs the ledger still keeps.
      const job = own ? null : await this.jobs.findById(jobId);
      if (!own && job === null) return { jobId, jobName: null, own, last: null, gone: true };
      const carried = await this.lastAnswerInLedger(jobId, own);
      return job ? { ...carried, jobName: job.name } : carried;
    } catch (error) {
      // The ledger shows runs; a run does not fail for what it cannot read there.
      this.log.warn(`the last answer of job ${jobId} could not be read from the run ledger; the run goes on without it`, {
        job: jobId,
        error: errorText(error),
      });
      return { jobId, jobName: null, own, last: null };
    }
  }

  private async lastAnswerInLedger(jobId: string, own: boolean): Promise<CarriedAnswer> {
    const find = async (limit: number) => {
      const runs = await this.ledger.list({ kind: 'cron', subject: jobId, limit });
      return { runs, found: runs.find((run) => run.status === 'ok' && run.answer !== null && run.answer.trim() !== '') };
    };
    let { runs, found } = await find(FIRST_LOOK);
    if (!found && runs.length >= FIRST_LOOK) ({ runs, found } = await find(WHOLE_LOOK));
    const jobName = found?.name ?? runs[0]?.name ?? null;
    return {
      jobId,
      jobName,
      own,
      last: found ? { answer: found.answer!, at: found.finished_at ?? found.started_at } : null,
    };
  }

  /** A webhook run's context: memory, the first of the route's skills found, and the rendered prompt. */
  async forWebhook(owner: RunOwner, skills: readonly string[], prompt: string): Promise<RunContext> {
    return buildWebhookRunContext({ memories: await this.memory.load(), skill: await this.firstFound(owner, skills), prompt });
  }

  /** A chat turn's context: memory and the question; the conversation goes with the run itself. */
  async forChat(question: string): Promise<RunContext> {
    return buildChatContext({ memories: await this.memory.load(), question });
  }

  private async everyNamed(owner: RunOwner, names: readonly string[]): Promise<Array<{ name: string; content: string | null }>> {
    return Promise.all(
      names.map(async (name) => {
        const content = await this.skills.find(name);
        if (content === null) this.log.warn(`skill "${name}" of ${owner.label} was not found`, owner.about);
        return { name, content };
      }),
    );
  }

  private async firstFound(owner: RunOwner, names: readonly string[]): Promise<ContextDocument | null> {
    for (const name of names) {
      const content = await this.skills.find(name);
      if (content !== null) return { name, content };
    }
    if (names.length > 0) this.log.warn(`none of the skills of ${owner.label} was found (${names.join(', ')}); running without one`);
    return null;
  }
}
