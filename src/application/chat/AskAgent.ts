import { inject, injectable, optional } from 'inversify';
import { ERROR_CODES, type ErrorCodeOf } from '../../domain/errorCodes.js';
import { AppError, errorText } from '../../domain/errors.js';
import type { JobOrigin } from '../../domain/Job.js';
import { chooseModel } from '../../domain/modelChoice.js';
import { cronRunToolsets } from '../../domain/toolsets.js';
import type { AgentRunner, ConversationTurn, ModelSelection } from '../ports/AgentRunner.js';
import { NO_TRACING, type RunTracing } from '../ports/RunTracing.js';
import type { CronSettings } from '../ports/Settings.js';
import { TOKENS } from '../ports/tokens.js';
import { RunContexts } from '../runs/RunContexts.js';

/** Toolsets of an interactive session: everything, the job tool included. */
export const CHAT_TOOLSETS: readonly string[] = ['agent-chat'];

/** A chat turn that cannot be asked: an empty question, no model to ask. */
export class ChatError extends AppError {
  constructor(code: ErrorCodeOf<'CHAT'>, message: string) {
    super(code, message);
  }
}

export interface AskAgentInput {
  question: string;
  /** Earlier turns of this session, oldest first; empty for a one-shot question. */
  conversation?: readonly ConversationTurn[];
  /** Overrides of the configured model for this session. */
  provider?: string | null;
  model?: string | null;
  /**
   * The session runs inside a cron run (`AGENT_CRON_RUN` set, e.g. started by its terminal
   * tool): it gets every toolset but the job tool, like the run itself.
   */
  insideCronRun?: boolean;
  /** Toolsets instead of every one (`agent-chat`), e.g. a platform's `toolsets`. */
  toolsets?: readonly string[];
  /** The chat this session answers in; jobs made in it record it as their origin (see JobOrigin). */
  origin?: JobOrigin | null;
  /** Receives the answer as it streams. */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
}

export interface AskAgentOutput {
  answer: string;
  answeredBy: string;
}

/**
 * One turn of `agent chat`: the question, with memory and the session's earlier turns, goes to
 * the agent with every toolset, the job tool included — a person is there to see what it does.
 * Throws ChatError `CHAT.NOT_CONFIGURED` before anything is spent when no model can run, and the
 * runner's AgentRunError when the run fails.
 */
@injectable()
export class AskAgent {
  constructor(
    @inject(TOKENS.AgentRunner) private readonly agent: AgentRunner,
    @inject(RunContexts) private readonly contexts: RunContexts,
    @inject(TOKENS.CronSettings) private readonly settings: CronSettings,
    /** A question asked outside any run's trace (`agent chat`) is a trace of its own (docs/traces.md). */
    @inject(TOKENS.RunTracing) @optional() private readonly tracing: RunTracing = NO_TRACING,
  ) {}

  async execute(input: AskAgentInput): Promise<AskAgentOutput> {
    if (input.question.trim() === '') {
      throw new ChatError(ERROR_CODES.CHAT.EMPTY_QUESTION, 'The question is empty; type what you want the agent to do.');
    }
    const selection = this.selectionFor(input);
    const problem = this.agent.problemWith(selection);
    if (problem) throw new ChatError(ERROR_CODES.CHAT.NOT_CONFIGURED, problem);
    // A chat turn of a platform is traced already (ChatTurns); a question of `agent chat` is a turn of its own.
    if (this.tracing.currentTraceId() !== null) return this.ask(input, selection);
    const trace = this.tracing.start({ kind: 'chat_turn', platform: 'cli', conversation: 'agent chat' });
    try {
      const answered = await trace.within(() => this.ask(input, selection));
      trace.end({ outcome: 'answered' });
      return answered;
    } catch (error) {
      trace.end({ outcome: 'failed', error: errorText(error) });
      throw error;
    }
  }

  private async ask(input: AskAgentInput, selection: ModelSelection): Promise<AskAgentOutput> {
    const result = await this.agent.run({
      context: await this.contexts.forChat(input.question),
      selection,
      toolsets: input.insideCronRun ? cronRunToolsets(input.toolsets ?? CHAT_TOOLSETS) : (input.toolsets ?? CHAT_TOOLSETS),
      idleTimeoutMs: this.settings.idleTimeoutMs,
      unattended: false,
      conversation: input.conversation ?? [],
      origin: input.origin ?? null,
      onText: input.onText,
      signal: input.signal,
    });
    return { answer: result.text, answeredBy: result.answeredBy };
  }

  private selectionFor(input: AskAgentInput): ModelSelection {
    return chooseModel({ provider: input.provider ?? null, model: input.model ?? null }, this.settings.defaultModel);
  }
}
