import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import type { Platforms } from '../ports/Platforms.js';
import type { RepoCommenter } from '../ports/RepoCommenter.js';
import type { WebhookRoutes } from '../ports/WebhookRoutes.js';
import { TOKENS } from '../ports/tokens.js';

/** One credential check: `ok` names the account, `failed` says what is wrong, `unchecked` why it could not be asked. */
export interface CredentialCheck {
  /** A platform name, or `repo_comment` for the GitHub CLI's login. */
  name: string;
  result: 'ok' | 'failed' | 'unchecked';
  detail: string;
}

/**
 * Asks each configured chat platform who its credentials belong to, through the platform's own
 * "who am I" call (nothing is sent), and, when a webhook route delivers as `repo_comment`, who the
 * GitHub CLI is signed in as. Platforms that are not configured are not contacted.
 */
@injectable()
export class CheckPlatformCredentials {
  constructor(
    @inject(TOKENS.Platforms) private readonly platforms: Platforms,
    @inject(TOKENS.WebhookRoutes) private readonly routes: WebhookRoutes,
    @inject(TOKENS.RepoCommenter) private readonly commenter: RepoCommenter,
  ) {}

  async execute(): Promise<CredentialCheck[]> {
    const configured = this.platforms.statuses().filter((status) => status.configured);
    const checks = await Promise.all(configured.map((status) => this.checkPlatform(status.platform)));
    const routes = await this.routes.all();
    if (routes.some((route) => route.deliver === 'repo_comment')) checks.push(await this.checkRepoComment());
    return checks;
  }

  private async checkPlatform(platform: string): Promise<CredentialCheck> {
    try {
      const sender = await this.platforms.sender(platform);
      const who = sender.whoAmI === undefined ? null : await sender.whoAmI();
      if (who === null) {
        return {
          name: platform,
          result: 'unchecked',
          detail: `${platform} has no "who am I" call; "agent send ${platform} test" is the way to try its credentials`,
        };
      }
      return { name: platform, result: 'ok', detail: `signed in as ${who}` };
    } catch (error) {
      return { name: platform, result: 'failed', detail: errorText(error) };
    }
  }

  private async checkRepoComment(): Promise<CredentialCheck> {
    if (this.commenter.signedInAs === undefined) {
      return { name: 'repo_comment', result: 'unchecked', detail: 'the code-host CLI cannot be asked who it is signed in as' };
    }
    try {
      return { name: 'repo_comment', result: 'ok', detail: `gh is signed in as ${await this.commenter.signedInAs()}` };
    } catch (error) {
      return { name: 'repo_comment', result: 'failed', detail: errorText(error) };
    }
  }
}
