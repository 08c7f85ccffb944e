import { AppError } from '../../domain/errors.js';
import type { RunContext } from '../../domain/RunContext.js';

/** Which model a run asks for; null fields fall back to the configured default. */
export interface ModelSelection {
  provider: string | null;
  model: string | null;
}

export interface AgentRunRequest {
  context: RunContext;
  selection: ModelSelection;
  /** Toolsets this session may use; cron runs never include `cronjob` (rule 3). */
  toolsets: readonly string[];
  /** Milliseconds without any sign of activity before the run is cancelled; null = no limit. */
  idleTimeoutMs: number | null;
  signal?: AbortSignal;
}

export interface AgentRunResult {
  /** The agent's final answer, as it gave it. */
  text: string;
  /** Which provider (and model) produced the answer, for the output file. */
  answeredBy: string;
}

/** A run that started and failed. `message` goes into `last_error`. */
export class AgentRunError extends AppError {
  constructor(
    readonly reason: 'idle_timeout' | 'failed' | 'aborted',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`AGENT.${reason.toUpperCase()}`, message, options);
  }
}

/** A fresh agent session per call: no history is shared between calls (rule 1). */
export interface AgentRunner {
  /**
   * Why a run with this selection cannot start (no model configured, unknown provider, missing
   * credentials), as a sentence that says how to fix it; null when it can. Spends nothing.
   */
  problemWith(selection: ModelSelection): string | null;
  /** Runs one session to its answer; throws AgentRunError when the run fails. */
  run(request: AgentRunRequest): Promise<AgentRunResult>;
}
