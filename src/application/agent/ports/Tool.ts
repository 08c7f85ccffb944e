import type { JobOrigin } from '../../../domain/Job.js';
import type { TranscriptImage } from '../../../domain/agent/transcript.js';
import { ERROR_CODES } from '../../../domain/errorCodes.js';
import { AppError } from '../../../domain/errors.js';

/** What the model is told about a tool: its name, what it does, and its arguments as JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON Schema of `type: "object"` describing the arguments. */
  parameters: Record<string, unknown>;
}

export interface ToolCallContext {
  /** Aborted when the run is cancelled (idle timeout, shutdown); long tools must stop then. */
  signal: AbortSignal;
  /** True for cron and webhook runs, where nobody can answer a question. */
  unattended: boolean;
  /**
   * Whether tools may reach loopback, private and link-local addresses; false for runs driven
   * by content from outside (webhook payloads). Absent: they may.
   */
  privateNetworks?: boolean;
  /** Variables added to the environment of every process a tool starts (a cron run's `AGENT_CRON_RUN`). */
  environment?: Readonly<Record<string, string>>;
  /** The folder a tool's commands run in and may write (a job's `workdir`); absent: the workspace. */
  workingDirectory?: string | null;
  /** The chat this session answers in, when it has one: what a job made in it records as its origin. */
  origin?: JobOrigin | null;
  /**
   * Asks the run's current model about one image, in a call of its own: the image and the
   * question, no tools, none of the conversation. The `vision` tool's way to the model; absent
   * where the session has no model to ask.
   */
  askAboutImage?: (image: TranscriptImage, question: string) => Promise<ImageAnswer>;
}

/**
 * How a question about an image went. `model` names the model as messages do
 * (`openai (gpt-4o-mini)`); `problem` is a phrase starting in lower case.
 */
export type ImageAnswer =
  | { kind: 'answer'; text: string }
  /** The model takes no images: configured so, or it refused the request that carried one. */
  | { kind: 'no_images'; model: string; problem: string }
  /** The call failed otherwise (unreachable, rate-limited, refused key). */
  | { kind: 'failed'; model: string; problem: string };

/**
 * A tool the agent runtime offers to a model. Tools are adapters of their own kind: the model is
 * the user, and a tool translates its call into use cases (through ports such as JobControl) or
 * outside effects.
 */
export interface Tool {
  readonly spec: ToolSpec;
  /**
   * Runs one call. `args` is what the model sent, already parsed from JSON. Returns the text the
   * model gets back (JSON text for structured results). Throws ToolInputError when the arguments
   * are wrong, so the runtime can tell the model; any other failure is a result, not a throw.
   */
  call(args: Record<string, unknown>, context: ToolCallContext): Promise<string>;
  /**
   * Whether this host can offer the tool now (web_search needs a configured backend). A tool
   * without this method is always available; a catalog leaves unavailable tools out.
   */
  isAvailable?(): boolean;
}

/** The model called a tool with arguments it cannot take; the message goes back to the model. */
export class ToolInputError extends AppError {
  constructor(message: string) {
    super(ERROR_CODES.TOOL.INVALID_INPUT, message);
  }
}
