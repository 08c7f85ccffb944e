import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './freePort.js';
import { execFile, registerCleanup } from './testProcesses.js';

const run = promisify(execFile);

/** Where Debian's PostgreSQL 15 (the server of this machine, which `.ci/run` installs) keeps its programs. */
async function serverPrograms(): Promise<string> {
  const versions = (await readdir('/usr/lib/postgresql')).sort();
  if (versions.length === 0) throw new Error('PostgreSQL is not installed under /usr/lib/postgresql; .ci/run installs it');
  return join('/usr/lib/postgresql', versions.at(-1)!, 'bin');
}

/** A PostgreSQL server of one test's own, which it may restart or stop without disturbing others. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/agent`: a database `agent`, no password (trust). */
  url: string;
  port: number;
  /** Restarts the server (a fast shutdown: open connections are cut, as `pg_ctlcluster … restart` does). */
  restart(): Promise<void>;
  /** Stops the server (fast shutdown) until `start`: the database is away meanwhile. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its data. */
  destroy(): Promise<void>;
}

/**
 * Starts a PostgreSQL server of its own on a free loopback port, its data in a temporary
 * directory: for tests that restart the server under load. The server refuses to run as root,
 * so as root it runs as the `postgres` user.
 */
export async function privatePostgres(): Promise<PrivatePostgres> {
  const bin = await serverPrograms();
  const dir = await mkdtemp(join(tmpdir(), 'agent-pg-'));
  const asRoot = process.getuid?.() === 0;
  const as = async (program: string, args: string[]) => {
    const command = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, program), ...args]] : [join(bin, program), args];
    return run(command[0] as string, command[1] as string[], { timeout: 60_000 });
  };
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(group.trim()));
  }
  const data = join(dir, 'data');
  await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pgCtl = (...args: string[]) => as('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', ...args]);
  // Its server is no child of ours (pg_ctl starts it in a session of its own): stopped and
  // removed when the test (or the file) that made it ends, even if that test failed.
  const destroy = async () => {
    await pgCtl('stop', '-m', 'immediate').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  registerCleanup(destroy);
  await pgCtl('start');
  await as('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', 'CREATE DATABASE agent']).catch(async () => {
    // psql is not beside the server's programs on every layout: the client on the PATH does as well.
    await run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', 'CREATE DATABASE agent']);
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/agent`,
    port,
    restart: async () => {
      await pgCtl('restart', '-m', 'fast');
    },
    stop: async () => {
      await pgCtl('stop', '-m', 'fast');
    },
    start: async () => {
      await pgCtl('start');
    },
    destroy,
  };
}
