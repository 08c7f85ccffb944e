import { ERROR_CODES } from '../../domain/errorCodes.js';
import { InvalidInputError } from '../../domain/errors.js';

/** A job's working folder that cannot be used: missing, not a folder, or one that would open the agent's home. */
export class WorkdirError extends InvalidInputError {
  constructor(message: string) {
    super(ERROR_CODES.JOB.INVALID_WORKDIR, message);
  }
}

/**
 * A job's working folder (`--workdir`, docs/cron.md): where its terminal commands and its
 * pre-run script run, bound writable into the sandbox, and whose AGENTS.md its runs read.
 */
export interface WorkingDirectories {
  /**
   * The folder `path` names, as it is stored: absolute (a relative path is read from the
   * workspace, `$AGENT_HOME/workspace`). Throws WorkdirError, in one sentence, when it does not
   * exist, is not a folder, is the root, or is the agent's home, holds it or lies in it outside
   * the workspace. Creates nothing.
   */
  check(path: string): Promise<string>;
  /**
   * The text of `AGENTS.md` in `folder`; null when there is none or it is empty. Throws
   * `CONTEXT.UNREADABLE`, as for a skill, when it exists but cannot be read.
   */
  instructions(folder: string): Promise<string | null>;
}
