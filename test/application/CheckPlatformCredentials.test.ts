import { CheckPlatformCredentials } from '../../src/application/delivery/CheckPlatformCredentials.js';
import { RepoCommentError } from '../../src/application/ports/RepoCommenter.js';
import { FakePlatforms } from '../support/fakes/FakePlatforms.js';
import { aRoute, FakeWebhookRoutes } from '../support/fakes/FakeWebhookRoutes.js';
import { RecordingRepoCommenter } from '../support/fakes/RecordingRepoCommenter.js';

describe('CheckPlatformCredentials', () => {
  it('contacts only configured platforms, and says so for one without a "who am I" call', async () => {
    const platforms = new FakePlatforms([{ platform: 'signal' }, { platform: 'slack', configured: false }]);
    const checks = await new CheckPlatformCredentials(platforms, new FakeWebhookRoutes(), new RecordingRepoCommenter()).execute();

    expect(checks).toEqual([
      {
        name: 'signal',
        result: 'unchecked',
        detail: 'signal has no "who am I" call; "agent send signal test" is the way to try its credentials',
      },
    ]);
  });

  it('asks the GitHub CLI who it is signed in as only when a route delivers as repo_comment', async () => {
    const commenter = new RecordingRepoCommenter();
    const routes = new FakeWebhookRoutes([aRoute('prs', { deliver: 'repo_comment' })]);

    expect(await new CheckPlatformCredentials(new FakePlatforms([]), routes, commenter).execute()).toEqual([
      { name: 'repo_comment', result: 'ok', detail: 'gh is signed in as octocat' },
    ]);

    commenter.failWith = new RepoCommentError(
      'unauthenticated',
      'the GitHub CLI "gh" is not logged in; run "gh auth login" on the gateway host or set GH_TOKEN',
    );
    const [check] = await new CheckPlatformCredentials(new FakePlatforms([]), routes, commenter).execute();
    expect(check).toMatchObject({ name: 'repo_comment', result: 'failed' });
    expect(check!.detail).toContain('gh auth login');

    expect(await new CheckPlatformCredentials(new FakePlatforms([]), new FakeWebhookRoutes([aRoute('log')]), commenter).execute()).toEqual(
      [],
    );
  });
});
