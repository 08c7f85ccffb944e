/**
 * What a fresh agent session is given, for every run kind (docs/architecture.md, The run
 * pipeline): the memory files, the skills its kind's policy loads, and the task. The skills
 * policy is named per kind in SKILLS_POLICY, so that a kind's choice is read in one place.
 */
import { inject, injectable } from 'inversify';
import { buildChatContext, buildRunContext, type ContextDocument, type RunContext } from '../../domain/RunContext.js';
import { buildWebhookRunContext } from '../../domain/webhook/webhookRun.js';
import type { MemoryStore, SkillLibrary } from '../ports/ContextFiles.js';
import type { Logger } from '../ports/Logger.js';
import { TOKENS } from '../ports/tokens.js';

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

/** Builds the context of each kind's runs. */
@injectable()
export class RunContexts {
  constructor(
    @inject(TOKENS.MemoryStore) private readonly memory: MemoryStore,
    @inject(TOKENS.SkillLibrary) private readonly skills: SkillLibrary,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  /** A cron run's context: memory, every named skill (one missing becomes a note), the script's block and the prompt. */
  async forCron(owner: RunOwner, skills: readonly string[], prompt: string, scriptBlock: string | null): Promise<RunContext> {
    return buildRunContext({
      memories: await this.memory.load(),
      skills: await this.everyNamed(owner, skills),
      prompt,
      scriptBlock,
    });
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
