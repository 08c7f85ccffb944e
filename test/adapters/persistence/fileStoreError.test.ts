import { fileStoreError, fileSystemReason } from '../../../src/adapters/persistence/fileSystem.js';

/** A Node system error with `code`, as node:fs rejects with. */
const systemError = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: the system said no`), { code });

describe("a file store's error sentence", () => {
  it('says what could not be done where, and why in words with the system code after', () => {
    expect(fileStoreError('read', 'the job store /home/a/.agent/cron/jobs.json', systemError('EACCES'))).toBe(
      'Cannot read the job store /home/a/.agent/cron/jobs.json: this user lacks permission there (EACCES)',
    );
    expect(fileStoreError('write', 'run reports in /srv/agent/cron/output/a1', systemError('ENOSPC'))).toBe(
      'Cannot write run reports in /srv/agent/cron/output/a1: the disk is full (ENOSPC)',
    );
  });

  it.each([
    ['EPERM', 'this user lacks permission there (EPERM)'],
    ['EROFS', 'the file system is read-only (EROFS)'],
    ['EDQUOT', 'the disk is full (EDQUOT)'],
    ['ENOTDIR', 'part of the path is a file where a directory should be (ENOTDIR)'],
    ['EEXIST', 'part of the path is a file where a directory should be (EEXIST)'],
    ['EISDIR', 'a directory is in the way of the file (EISDIR)'],
    ['EIO', 'the file system refused (EIO)'],
  ])('gives %s as "%s"', (code, reason) => {
    expect(fileSystemReason(systemError(code))).toBe(reason);
    expect(fileStoreError('take', 'the tick lock /x/tick.lock', systemError(code))).toBe(
      `Cannot take the tick lock /x/tick.lock: ${reason}`,
    );
  });

  it('says "unknown error" for a failure that carries no system code', () => {
    expect(fileStoreError('list', '/home/a/.agent/skills', new Error('something else'))).toBe(
      'Cannot list /home/a/.agent/skills: the file system refused (unknown error)',
    );
    expect(fileSystemReason('not even an error')).toBe('the file system refused (unknown error)');
  });
});
