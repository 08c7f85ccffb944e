import type { JobOrigin } from '../../domain/Job.js';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';
import type { ModelChoice } from '../../domain/modelChoice.js';
import type { RunBudget, RunUsage } from '../../domain/runs/usage.js';
import type { RunContext } from '../../domain/RunContext.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';

/** Which model a run asks for; null fields fall back to the configured default. */
export type ModelSelection = ModelChoice;

/** One earlier exchange of an interactive conversation. */
export interface ConversationTurn {
  role: 'user' | 'assistant';
  content: string;
}

export interface AgentRunRequest {
  context: RunContext;
  selection: ModelSelection;
  /**
   * Toolsets this session may use (names from src/domain/toolsets.ts); cron runs never include
   * `cronjob`.
   */
  toolsets: readonly string[];
  /** Milliseconds without a streamed token or tool call before the run is cancelled; null = no limit. */
  idleTimeoutMs: number | null;
  /** True for cron and webhook runs: nobody can answer a question. */
  unattended: boolean;
  /**
   * Whether the session's tools may reach loopback, private and link-local addresses. Webhook
   * runs set it from their route (false unless the route allows it): their task carries text
   * from outside, which may try to steer the agent at internal services. Absent: they may.
   */
  privateNetworks?: boolean;
  /**
   * Earlier turns of an interactive conversation, oldest first, placed between the skills and
   * the task. Cron and webhook runs never have any.
   */
  conversation?: readonly ConversationTurn[];
  /**
   * Variables added to the environment of every process the run starts (the agent program, the
   * commands of its terminal tool); a cron run sets `AGENT_CRON_RUN` (the recursion guard).
   */
  environment?: Readonly<Record<string, string>>;
  /**
   * The folder the session's terminal commands run in and may write (a job's `workdir`), and
   * where a command agent program starts; absent: the workspace.
   */
  workingDirectory?: string | null;
  /** The chat this session answers in (a conversation on a platform, a bot-chat profile): jobs its job tool makes record it as their origin. */
  origin?: JobOrigin | null;
  /** Receives the transcript after each model turn and tool call (a session that keeps one), for the run ledger to show it as it grows. */
  onTranscript?: (transcript: RunTranscript) => void;
  /** Receives the answer's text as it streams, for a terminal to show. */
  onText?: (delta: string) => void;
  signal?: AbortSignal;
  /** Limits of this run: reaching one stops it before its next model turn (docs/runs.md). Absent: the configured `agent.budget`. */
  budget?: RunBudget | null;
}

/** What a run spent: its tokens and their cost in US dollars (null when a model it used has no price). */
export interface RunSpend {
  usage: RunUsage;
  costUsd: number | null;
}

export interface AgentRunResult {
  /** The agent's final answer, as it gave it. */
  text: string;
  /** Which provider (and model) produced the answer, for the output file. */
  answeredBy: string;
  /** What the session did, turn by turn (docs/runs.md, Transcripts); absent for a command agent. */
  transcript?: RunTranscript;
  /** What the run spent; absent when its agent reports nothing (a command agent that prints no usage). */
  usage?: RunUsage;
  /** What `usage` cost in US dollars (`models.prices`); null when a model it used has no price. */
  costUsd?: number | null;
}

/** What a run that ended with `error` spent until then, when it is known. */
export function spendOf(error: unknown): RunSpend | null {
  return error instanceof AgentRunError ? (error.spend ?? null) : null;
}

const AGENT_RUN_CODES = {
  idle_timeout: ERROR_CODES.AGENT.IDLE_TIMEOUT,
  failed: ERROR_CODES.AGENT.FAILED,
  aborted: ERROR_CODES.AGENT.ABORTED,
} as const;

/** A run that started and failed. `message` goes into `last_error`. */
export class AgentRunError extends AppError {
  /** The transcript of the run up to its failure, when the session kept one. */
  transcript?: RunTranscript;
  /** What the run spent before it failed (a run stopped by its budget, one whose provider failed mid-run). */
  spend?: RunSpend;

  /**
   * Whether the failure may pass by itself (docs/runs.md, Retries): every provider of the chain
   * answered 429 or 5xx, timed out or could not be reached, or the run went idle too long.
   */
  readonly transient: boolean;

  constructor(
    readonly reason: 'idle_timeout' | 'failed' | 'aborted',
    message: string,
    options?: { cause?: unknown; transient?: boolean },
  ) {
    super(AGENT_RUN_CODES[reason], message, options);
    this.transient = options?.transient ?? reason === 'idle_timeout';
  }
}

/**
 * A run its configuration cannot serve (an MCP server its toolsets name does not start): the run
 * is `blocked_config` with this sentence, as one whose preflight failed, instead of `error`.
 */
export class AgentRunBlockedError extends AgentRunError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('failed', message, options);
  }
}

/** A fresh agent session per call: no history is shared between calls. */
export interface AgentRunner {
  /**
   * Why a run with this selection cannot start (no model configured, unknown provider, missing
   * credentials), as a sentence that says how to fix it; null when it can. Spends nothing.
   */
  problemWith(selection: ModelSelection): string | null;
  /** Runs one session to its answer; throws AgentRunError when the run fails. */
  run(request: AgentRunRequest): Promise<AgentRunResult>;
  /** Loads ahead of the first run what runs of the configured model need; optional, never throws. */
  warmUp?(): Promise<void>;
}
