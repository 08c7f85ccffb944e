import { RepoCommentError, type RepoComment, type RepoCommenter } from '../../../src/application/ports/RepoCommenter.js';

/** Records the comments it is asked to post; `failWith` makes every comment fail that way. */
export class RecordingRepoCommenter implements RepoCommenter {
  readonly comments: RepoComment[] = [];
  failWith: RepoCommentError | null = null;

  async comment(comment: RepoComment): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.comments.push(comment);
  }

  /** `octocat`, or `failWith`. */
  async signedInAs(): Promise<string> {
    if (this.failWith) throw this.failWith;
    return 'octocat';
  }
}
