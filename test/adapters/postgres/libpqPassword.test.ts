import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { withLibpqPassword } from '../../../src/adapters/postgres/libpqPassword.js';

const directory = mkdtempSync(join(tmpdir(), 'libpq-password-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function passFile(content: string, mode = 0o600): string {
  const path = join(directory, `pgpass-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

describe('the password libpq’s variables give a database URL', () => {
  it('is PGPASSWORD for a URL without one, and the URL’s own where it has one', () => {
    expect(withLibpqPassword('postgres://agent@db:5432/agent', { PGPASSWORD: 'p@ss:w/rd' })).toBe(
      'postgres://agent:p%40ss%3Aw%2Frd@db:5432/agent',
    );
    expect(withLibpqPassword('postgres://agent:own@db/agent', { PGPASSWORD: 'other' })).toBe('postgres://agent:own@db/agent');
    expect(withLibpqPassword('postgres://agent@db/agent', {})).toBe('postgres://agent@db/agent');
  });

  it('goes into the query of a URL without a host (a Unix socket)', () => {
    expect(withLibpqPassword('postgres:///agent?host=/run/postgresql', { PGPASSWORD: 'secret' })).toBe(
      'postgres:///agent?host=%2Frun%2Fpostgresql&password=secret',
    );
  });

  it('is the first matching line of the file PGPASSFILE names, wildcards and escapes read as libpq does', () => {
    const file = passFile(['# comment', 'other:5432:agent:agent:wrong', 'db:*:agent:agent:pa\\:ss', 'db:5432:*:*:fallback', ''].join('\n'));
    expect(withLibpqPassword('postgres://agent@db/agent', { PGPASSFILE: file })).toBe('postgres://agent:pa%3Ass@db/agent');
    expect(withLibpqPassword('postgres://ops@db/stats', { PGPASSFILE: file })).toBe('postgres://ops:fallback@db/stats');
    expect(withLibpqPassword('postgres://ops@elsewhere/stats', { PGPASSFILE: file })).toBe('postgres://ops@elsewhere/stats');
  });

  it('is not read from a file others may read, nor from one that is missing', () => {
    expect(withLibpqPassword('postgres://agent@db/agent', { PGPASSFILE: passFile('*:*:*:*:open', 0o644) })).toBe(
      'postgres://agent@db/agent',
    );
    expect(withLibpqPassword('postgres://agent@db/agent', { PGPASSFILE: join(directory, 'missing') })).toBe('postgres://agent@db/agent');
  });
});
