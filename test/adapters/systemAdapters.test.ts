import 'reflect-metadata';
import { hostname } from 'node:os';
import { HostProcessIdentity } from '../../src/adapters/system/HostProcessIdentity.js';
import { RandomIdGenerator } from '../../src/adapters/system/RandomIdGenerator.js';
import { SystemClock } from '../../src/adapters/system/SystemClock.js';
import { exitOf } from '../support/childProcesses.js';
import { spawn } from '../support/testProcesses.js';

describe('SystemClock', () => {
  it('reads the current time', () => {
    const before = Date.now();
    const now = new SystemClock().now().getTime();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});

describe('RandomIdGenerator', () => {
  it('makes ids of 12 lowercase hexadecimal characters that do not repeat', () => {
    const ids = new RandomIdGenerator();
    // More than one pool of random bytes' worth (682 ids per pool).
    const made = Array.from({ length: 3000 }, () => ids.jobId());
    for (const id of made) expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(made).size).toBe(made.length);
  });
});

describe('HostProcessIdentity', () => {
  const identity = new HostProcessIdentity();

  function startIdleNode() {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
    return { child, exited: exitOf(child) };
  }

  it('names this process <hostname>:<pid>', () => {
    expect(identity.claimant()).toBe(`${hostname()}:${process.pid}`);
  });

  it('sees this process as alive', () => {
    expect(identity.isAlive(identity.claimant())).toBe(true);
  });

  it('sees a running process on this host as alive, and as dead once it has exited', async () => {
    const { child, exited } = startIdleNode();
    const claimant = `${hostname()}:${child.pid}`;
    expect(identity.isAlive(claimant)).toBe(true);

    child.kill('SIGKILL');
    await exited;

    expect(identity.isAlive(claimant)).toBe(false);
  });

  it('matches this host name regardless of letter case', () => {
    expect(identity.isAlive(`${hostname().toUpperCase()}:${process.pid}`)).toBe(true);
  });

  it('cannot tell for a claimant on another host', () => {
    expect(identity.isAlive(`not-${hostname()}:${process.pid}`)).toBe('unknown');
  });

  it.each(['', 'no-pid', `${hostname()}:`, `${hostname()}:0`, `${hostname()}:-1`, `${hostname()}:12ab`, ':123'])(
    'cannot tell for the malformed claimant %j',
    (claimant) => {
      expect(identity.isAlive(claimant)).toBe('unknown');
    },
  );
});
