import { childProcesses } from './childProcesses.js';
import { inject, injectable } from 'inversify';
import { RepoCommentError, type RepoComment, type RepoCommenter } from '../../application/ports/RepoCommenter.js';
import { CONFIG_TOKENS } from '../config/tokens.js';
import { CappedOutput } from './CappedOutput.js';
import { withoutProviderSecrets } from './childEnvironment.js';
import { whenChildFinished } from './childFinished.js';

/** A comment that takes longer than this is abandoned: gh is stuck on the network or a prompt. */
const GH_TIMEOUT_MS = 120_000;
/** `gh auth status` asks the host; a check that takes longer is a failure. */
const GH_STATUS_TIMEOUT_MS = 20_000;
/** The end of gh's stderr kept for the message; the reason is in its last lines. */
const STDERR_KEPT_BYTES = 4096;
/** gh's exit code for "authentication required". */
const GH_AUTH_EXIT_CODE = 4;
const NOT_LOGGED_IN = /gh auth login|not logged in|authentication required|bad credentials|HTTP 401/i;

/**
 * `repo_comment` through the GitHub CLI (decisions §7):
 * `gh pr comment <n> --repo <owner/repo> --body-file -` with the body on stdin, so no answer
 * text ever lands on a command line. gh uses the host's own login (`gh auth login`, GH_TOKEN);
 * model provider keys are not passed on.
 */
@injectable()
export class GhRepoCommenter implements RepoCommenter {
  constructor(@inject(CONFIG_TOKENS.Environment) private readonly env: NodeJS.ProcessEnv) {}

  async comment({ repo, prNumber, body }: RepoComment): Promise<void> {
    const args = ['pr', 'comment', String(prNumber), '--repo', repo, '--body-file', '-'];
    const { spawn } = await childProcesses();
    return new Promise<void>((resolve, reject) => {
      const child = spawn('gh', args, {
        env: { ...withoutProviderSecrets(this.env), GH_PROMPT_DISABLED: '1', NO_COLOR: '1' },
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      const stderr = new CappedOutput(STDERR_KEPT_BYTES, 'end');
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, GH_TIMEOUT_MS);
      child.stderr.on('data', (chunk: Buffer) => stderr.append(chunk));
      // gh may exit before reading its stdin (bad flags, no login); its exit code tells why.
      child.stdin.on('error', () => undefined);
      child.stdin.end(body);
      child.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          error.code === 'ENOENT'
            ? new RepoCommentError(
                'cli_missing',
                'the GitHub CLI "gh" is not installed or not on PATH; install it on the gateway host and run "gh auth login"',
                { cause: error },
              )
            : new RepoCommentError('failed', `could not start gh: ${error.message}`, { cause: error }),
        );
      });
      whenChildFinished(child, (code) => {
        clearTimeout(timer);
        const said = stderr.text().trim();
        if (code === 0) return resolve();
        if (timedOut) return reject(new RepoCommentError('failed', `gh pr comment did not finish within ${GH_TIMEOUT_MS / 1000} s`));
        if (code === GH_AUTH_EXIT_CODE || NOT_LOGGED_IN.test(said)) {
          return reject(
            new RepoCommentError(
              'unauthenticated',
              'the GitHub CLI "gh" is not logged in; run "gh auth login" on the gateway host or set GH_TOKEN',
            ),
          );
        }
        reject(new RepoCommentError('failed', `gh pr comment on ${repo}#${prNumber} failed (exit ${code ?? 'signal'})${said ? `: ${said}` : ''}`));
      });
    });
  }

  /** `gh auth status`: the account it reports (older versions write it on stderr, newer on stdout). */
  async signedInAs(): Promise<string> {
    const { execFile } = await childProcesses();
    return new Promise<string>((resolve, reject) => {
      execFile(
        'gh',
        ['auth', 'status'],
        { env: { ...withoutProviderSecrets(this.env), GH_PROMPT_DISABLED: '1', NO_COLOR: '1' }, timeout: GH_STATUS_TIMEOUT_MS },
        (error, stdout, stderr) => {
          const said = `${stdout}\n${stderr}`;
          if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') {
            return reject(new RepoCommentError('cli_missing', 'the GitHub CLI "gh" is not installed or not on PATH; install it on the gateway host and run "gh auth login"', { cause: error }));
          }
          if (error) {
            return reject(new RepoCommentError('unauthenticated', 'the GitHub CLI "gh" is not logged in; run "gh auth login" on the gateway host or set GH_TOKEN', { cause: error }));
          }
          resolve(/account (\S+)/.exec(said)?.[1] ?? /Logged in to \S+ as (\S+)/.exec(said)?.[1] ?? 'an account gh did not name');
        },
      );
    });
  }
}
