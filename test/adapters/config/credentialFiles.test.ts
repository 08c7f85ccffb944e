import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withCredentialFiles } from '../../../src/adapters/config/credentialFiles.js';

describe('credentials given as files (<NAME>_FILE)', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'secrets-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads each credential from its file, without the last line break, and leaves the given environment alone', async () => {
    await writeFile(join(dir, 'telegram'), '123:abc\n');
    await writeFile(join(dir, 'openai'), 'sk-1\r\n');
    const given = { TELEGRAM_BOT_TOKEN_FILE: join(dir, 'telegram'), OPENAI_API_KEY_FILE: join(dir, 'openai'), PATH: '/bin' };

    const env = withCredentialFiles(given);

    expect(env).toEqual({ ...given, TELEGRAM_BOT_TOKEN: '123:abc', OPENAI_API_KEY: 'sk-1' });
    expect(given).not.toHaveProperty('TELEGRAM_BOT_TOKEN');
  });

  it('reads only the files of credentials: other _FILE variables are left as they are', () => {
    const given = { KUBECONFIG_FILE: '/nowhere', HISTFILE: '/nowhere', PATH: '/bin' };
    expect(withCredentialFiles(given)).toBe(given);
  });

  it('refuses, in one sentence, a file it cannot read and a credential given both ways', () => {
    expect(() => withCredentialFiles({ SLACK_BOT_TOKEN_FILE: join(dir, 'gone') })).toThrow(
      `SLACK_BOT_TOKEN_FILE names ${join(dir, 'gone')}, which cannot be read (ENOENT); point it at the file that holds the secret, readable by this user.`,
    );
    expect(() => withCredentialFiles({ SLACK_BOT_TOKEN_FILE: join(dir, 'x'), SLACK_BOT_TOKEN: 'xoxb' })).toThrow(
      /^Both SLACK_BOT_TOKEN and SLACK_BOT_TOKEN_FILE are set; set only one/,
    );
  });
});
