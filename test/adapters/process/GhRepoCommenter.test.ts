import 'reflect-metadata';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GhRepoCommenter } from '../../../src/adapters/process/GhRepoCommenter.js';

/** A stand-in `gh` on PATH: records its arguments and stdin, then exits as told. */
async function fakeGh(directory: string, exitCode: number, stderr = ''): Promise<void> {
  const script = [
    '#!/bin/sh',
    `printf '%s\\n' "$@" > "${join(directory, 'args')}"`,
    `cat > "${join(directory, 'stdin')}"`,
    `env > "${join(directory, 'env')}"`,
    stderr ? `printf '%s\\n' '${stderr}' >&2` : '',
    `exit ${exitCode}`,
  ].join('\n');
  await writeFile(join(directory, 'gh'), script);
  await chmod(join(directory, 'gh'), 0o755);
}

describe('GhRepoCommenter', () => {
  let bin: string;
  const commenter = (extra: NodeJS.ProcessEnv = {}) =>
    new GhRepoCommenter({ PATH: `${bin}:/usr/bin:/bin`, OPENAI_API_KEY: 'sk-secret', GH_TOKEN: 'gho_token', ...extra });
  const comment = { repo: 'octo/widgets', prNumber: 42, body: 'Looks good.\n$(rm -rf /) stays text' };

  beforeEach(async () => {
    bin = await mkdtemp(join(tmpdir(), 'agent-gh-'));
  });

  afterEach(async () => {
    await rm(bin, { recursive: true, force: true });
  });

  it('runs gh pr comment <n> --repo <owner/repo> --body-file - with the answer on stdin', async () => {
    await fakeGh(bin, 0);

    await commenter().comment(comment);

    expect((await readFile(join(bin, 'args'), 'utf8')).split('\n')).toEqual([
      'pr',
      'comment',
      '42',
      '--repo',
      'octo/widgets',
      '--body-file',
      '-',
      '',
    ]);
    expect(await readFile(join(bin, 'stdin'), 'utf8')).toBe(comment.body);
  });

  it('gives gh the host login but no model provider keys', async () => {
    await fakeGh(bin, 0);

    await commenter().comment(comment);

    const env = await readFile(join(bin, 'env'), 'utf8');
    expect(env).toContain('GH_TOKEN=gho_token');
    expect(env).not.toContain('OPENAI_API_KEY');
  });

  it('says gh is missing when it is not on PATH', async () => {
    await expect(commenter({ PATH: bin }).comment(comment)).rejects.toMatchObject({
      reason: 'cli_missing',
      message: expect.stringMatching(/"gh" is not installed or not on PATH/),
    });
  });

  it('says gh is not logged in when it asks for authentication', async () => {
    await fakeGh(bin, 4, 'To get started with GitHub CLI, please run:  gh auth login');

    await expect(commenter().comment(comment)).rejects.toMatchObject({
      reason: 'unauthenticated',
      message: expect.stringMatching(/not logged in; run "gh auth login"/),
    });
  });

  it('passes on what gh said when the code host refuses, e.g. an unknown repository', async () => {
    await fakeGh(bin, 1, 'GraphQL: Could not resolve to a Repository with the name octo/widgets.');

    await expect(commenter().comment(comment)).rejects.toMatchObject({
      reason: 'failed',
      message: 'gh pr comment on octo/widgets#42 failed (exit 1): GraphQL: Could not resolve to a Repository with the name octo/widgets.',
    });
  });

  it('reads the signed-in account from gh auth status', async () => {
    await writeFile(join(bin, 'gh'), "#!/bin/sh\necho '  ✓ Logged in to github.com account octocat (keyring)' >&2\n");
    await chmod(join(bin, 'gh'), 0o755);

    expect(await commenter().signedInAs()).toBe('octocat');
  });

  it('says gh is not logged in when gh auth status fails', async () => {
    await fakeGh(bin, 1, 'You are not logged into any GitHub hosts.');

    await expect(commenter().signedInAs()).rejects.toMatchObject({ reason: 'unauthenticated' });
  });

  it('says gh is missing when gh auth status cannot find it', async () => {
    await expect(commenter({ PATH: bin }).signedInAs()).rejects.toMatchObject({ reason: 'cli_missing' });
  });
});
