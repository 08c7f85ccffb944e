import { ERROR_CODES, type ErrorCodeOf } from '../../domain/errorCodes.js';
import { AppError } from '../../domain/errors.js';

/** A comment to post on a pull request of a code-host repository. */
export interface RepoComment {
  /** `owner/name`. */
  repo: string;
  /** A positive integer. */
  prNumber: number;
  body: string;
}

/**
 * Why a comment was not posted: the code-host CLI is missing (not installed, not on PATH), it is
 * not logged in, or the code host refused (unknown repository or pull request, no permission …).
 */
export type RepoCommentFailure = 'cli_missing' | 'unauthenticated' | 'failed';

const REPO_COMMENT_CODES: Record<RepoCommentFailure, ErrorCodeOf<'REPO_COMMENT'>> = {
  cli_missing: ERROR_CODES.REPO_COMMENT.CLI_MISSING,
  unauthenticated: ERROR_CODES.REPO_COMMENT.UNAUTHENTICATED,
  failed: ERROR_CODES.REPO_COMMENT.FAILED,
};

export class RepoCommentError extends AppError {
  constructor(
    readonly reason: RepoCommentFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(REPO_COMMENT_CODES[reason], message, options);
  }
}

/** Posts answers as pull-request comments (delivery `repo_comment`). */
export interface RepoCommenter {
  /**
   * Posts `comment.body` on the pull request; resolves once the code host accepted it. Throws
   * RepoCommentError, whose message says what to do; never retries.
   */
  comment(comment: RepoComment): Promise<void>;
  /**
   * The account the code-host CLI is signed in as; posts nothing. Throws RepoCommentError
   * (`cli_missing`, `unauthenticated`). Absent where the CLI cannot be asked.
   */
  signedInAs?(): Promise<string>;
}
