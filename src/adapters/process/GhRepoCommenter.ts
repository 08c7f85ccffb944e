import { inject, injectable, optional } from 'inversify';
import { RepoCommentError, type RepoComment, type RepoCommenter } from '../../application/ports/RepoCommenter.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { CappedOutput } from './CappedOutput.js';
import { ChildEnvironments } from './ChildEnvironments.js';
import { ChildProcessRunner } from './ChildProcessRunner.js';
import { platformProcessTreeKiller } from './platformProcessTreeKiller.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';

/** A comment that takes longer than this is abandoned: gh is stuck on the network or a prompt. */
const GH_TIMEOUT_MS = 120_000;
/** `gh auth status` asks the host; a check that takes longer is a failure. */
const GH_STATUS_TIMEOUT_MS = 20_000;
/** What of `gh auth status` output is read for the account name, per stream. */
const STATUS_KEPT_BYTES = 64 * 1024;
/** The end of gh's stderr kept for the message; the reason is in its last lines. */
const STDERR_KEPT_BYTES = 4096;
/** gh's exit code for "authentication required". */
const GH_AUTH_EXIT_CODE = 4;
const CLI_MISSING = 'the GitHub CLI "gh" is not installed or not on PATH; install it on the gateway host and run "gh auth login"';
const NOT_LOGGED_IN = /gh auth login|not logged in|authentication required|bad credentials|HTTP 401/i;

/**
 * `repo_comment` through the GitHub CLI:
 * `gh pr comment <n> --repo <owner/repo> --body-file -` with the body on stdin, so no answer
 * text ever lands on a command line. gh uses the host's own login (`gh auth login`, GH_TOKEN);
 * no other credential of the service is passed on.
 */
@injectable()
export class GhRepoCommenter implements RepoCommenter {
  private readonly children: ChildProcessRunner;

  constructor(
    @inject(CONFIG_TOKENS.Environment) private readonly env: NodeJS.ProcessEnv,
    @inject(TOKENS.ProcessTreeKiller) @optional() killer?: ProcessTreeKiller,
  ) {
    this.children = new ChildProcessRunner(killer ?? platformProcessTreeKiller());
  }

  /** The host's environment with gh's own login and no other credential; gh must never prompt or colour. */
  private ghEnvironment(): NodeJS.ProcessEnv {
    return { ...new ChildEnvironments(this.env).forCodeHostCli(), GH_PROMPT_DISABLED: '1', NO_COLOR: '1' };
  }

  async comment({ repo, prNumber, body }: RepoComment): Promise<void> {
    const stderr = new CappedOutput(STDERR_KEPT_BYTES, 'end');
    const end = await this.children.run({
      program: 'gh',
      args: ['pr', 'comment', String(prNumber), '--repo', repo, '--body-file', '-'],
      env: this.ghEnvironment(),
      stdin: body,
      stderr,
      timeoutMs: GH_TIMEOUT_MS,
    });
    if (end.kind === 'not_started') throw startError(end.error);
    // Only the timeout stops it; gh and everything it started were killed.
    if (end.kind === 'stopped') throw new RepoCommentError('failed', `gh pr comment did not finish within ${GH_TIMEOUT_MS / 1000} s`);
    const { code } = end;
    if (code === 0) return;
    const said = stderr.text().trim();
    if (code === GH_AUTH_EXIT_CODE || NOT_LOGGED_IN.test(said)) throw notLoggedIn();
    throw new RepoCommentError(
      'failed',
      `gh pr comment on ${repo}#${prNumber} failed (exit ${code ?? 'signal'})${said ? `: ${said}` : ''}`,
    );
  }

  /** `gh auth status`: the account it reports (older versions write it on stderr, newer on stdout). */
  async signedInAs(): Promise<string> {
    const stdout = new CappedOutput(STATUS_KEPT_BYTES, 'start');
    const stderr = new CappedOutput(STATUS_KEPT_BYTES, 'start');
    const end = await this.children.run({
      program: 'gh',
      args: ['auth', 'status'],
      env: this.ghEnvironment(),
      stdout,
      stderr,
      timeoutMs: GH_STATUS_TIMEOUT_MS,
    });
    if (end.kind === 'not_started') {
      if (end.error.code === 'ENOENT') throw startError(end.error);
      throw notLoggedIn({ cause: end.error });
    }
    if (end.kind === 'stopped')
      throw notLoggedIn({ cause: new Error(`gh auth status did not finish within ${GH_STATUS_TIMEOUT_MS / 1000} s`) });
    const said = `${stdout.text()}\n${stderr.text()}`;
    if (end.code !== 0) throw notLoggedIn({ cause: new Error(`gh auth status failed (exit ${end.code ?? end.signal}): ${said.trim()}`) });
    return /account (\S+)/.exec(said)?.[1] ?? /Logged in to \S+ as (\S+)/.exec(said)?.[1] ?? 'an account gh did not name';
  }
}

function startError(error: NodeJS.ErrnoException): RepoCommentError {
  return error.code === 'ENOENT'
    ? new RepoCommentError('cli_missing', CLI_MISSING, { cause: error })
    : new RepoCommentError('failed', `could not start gh: ${error.message}`, { cause: error });
}

function notLoggedIn(options?: ErrorOptions): RepoCommentError {
  return new RepoCommentError(
    'unauthenticated',
    'the GitHub CLI "gh" is not logged in; run "gh auth login" on the gateway host or set GH_TOKEN',
    options,
  );
}
