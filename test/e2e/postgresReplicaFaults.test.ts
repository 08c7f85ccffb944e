import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../support/freePort.js';
import { eventually } from '../support/processLiveness.js';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { privatePostgres, type PrivatePostgres } from '../support/privatePostgres.js';
import { FakePortal } from '../support/fakePortal.js';
import { requireBuiltAgent, runAgent, startGatewayUntil } from './agentCli.js';
import { commandModelLines } from './configLines.js';
import { postPullRequestEvent } from './signedDelivery.js';

const SECRET = 'replica-secret';
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Replica {
  home: string;
  port: number;
  gateway: ChildProcess;
  output: () => string;
}

/**
 * Gateways sharing one PostgreSQL database under faults: managed fires of one slot sent to every
 * replica at once, webhook events sent round robin to
 * their listeners, a replica killed with -9 in the middle of its runs, the database stopped and
 * started again under load. Every accepted event and every slot is counted at the agent, which
 * appends the mark its prompt carries to one file.
 */
describe('gateway replicas on PostgreSQL under faults', () => {
  let work: string;
  const replicas: Replica[] = [];

  beforeAll(() => requireBuiltAgent());

  beforeEach(async () => {
    work = await mkdtemp(join(tmpdir(), 'agent-replica-faults-'));
  });

  /** Kills every replica still running (before its database goes). */
  const killReplicas = () => Promise.all(replicas.splice(0).map((replica) => killNow(replica.gateway)));

  afterEach(async () => {
    await killReplicas();
    await rm(work, { recursive: true, force: true });
  });

  async function killNow(gateway: ChildProcess): Promise<void> {
    if (gateway.exitCode !== null || gateway.signalCode !== null) return;
    const exited = once(gateway, 'exit');
    gateway.kill('SIGKILL');
    await exited;
  }

  /**
   * A home on `url` whose agent waits the seconds its prompt names (`wait-N`), then appends its
   * `mark-…` to ran.log; its listener on a port of its own.
   */
  async function replicaHome(
    name: string,
    url: string,
    settings: { rateLimit?: number; maxRuns?: number; leaseSeconds?: number; cron?: string[] } = {},
  ) {
    const home = join(work, name);
    await mkdir(home, { recursive: true });
    const port = await freePort();
    const script = [
      'mark=; wait=0',
      'while read -r line; do',
      '  case $line in *mark-*) mark=${line##*mark-}; mark=${mark%% *};; esac',
      '  case $line in *wait-*) wait=${line##*wait-}; wait=${wait%% *};; esac',
      'done',
      'sleep "$wait"',
      `echo "mark-$mark" >> ${join(work, 'ran.log')}`,
      'echo done',
    ].join('\n');
    const lines = [
      'timezone: UTC',
      ...commandModelLines(['sh', '-c', script]),
      'database:',
      `  url: ${url}`,
      `  lease_seconds: ${settings.leaseSeconds ?? 3}`,
      'platforms:',
      '  webhook:',
      '    enabled: true',
      '    extra:',
      '      host: 127.0.0.1',
      `      port: ${port}`,
      `      rate_limit: ${settings.rateLimit ?? 100000}`,
      `      max_concurrent_runs: ${settings.maxRuns ?? 4}`,
      ...(settings.cron ?? []),
    ];
    await writeFile(join(home, 'config.yaml'), `${lines.join('\n')}\n`);
    return { home, port };
  }

  async function startReplica(home: string, port: number, env: Record<string, string> = {}): Promise<Replica> {
    const started = await startGatewayUntil(home, 'gateway started', { withinMs: 20_000, env });
    const replica = { home, port, ...started };
    replicas.push(replica);
    return replica;
  }

  /** The subscription `pr`, made from an operator's laptop that names the database in its environment. */
  async function subscribeFromLaptop(url: string): Promise<void> {
    const laptop = join(work, 'laptop');
    await mkdir(laptop, { recursive: true });
    const made = await runAgent(['webhook', 'subscribe', 'pr', '--prompt', 'Do mark-{number} wait-{wait} now', '--secret', SECRET], {
      home: laptop,
      env: { AGENT_DATABASE_URL: url },
    });
    expect(made.stderr).toMatch(/^(warning: .*\n)?$/);
    expect(made.code).toBe(0);
  }

  /** Whether `check` came true within `ms` (asked every 100 ms). */
  async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await check()) return true;
      await sleep(100);
    }
    return check();
  }

  async function marks(): Promise<string[]> {
    const text = await readFile(join(work, 'ran.log'), 'utf8').catch(() => '');
    return text.trim() === '' ? [] : text.trim().split('\n');
  }

  /** Each mark of `numbers` once, and nothing else. */
  async function expectEachOnce(numbers: number[]): Promise<void> {
    expect((await marks()).sort()).toEqual(numbers.map((n) => `mark-${n}`).sort());
  }

  describe('on the shared server', () => {
    let scratch: ScratchDatabase;

    beforeEach(async () => {
      scratch = await scratchDatabase();
    });

    afterEach(async () => {
      await killReplicas();
      await scratch.drop();
    });

    it('runs each event once whichever replica accepted it, refuses a delivery seen by another, and holds one rate limit across them', async () => {
      const homes = await Promise.all(['a', 'b', 'c'].map((name) => replicaHome(name, scratch.url, { rateLimit: 30 })));
      for (const { home, port } of homes) await startReplica(home, port);
      await subscribeFromLaptop(scratch.url);

      const numbers = Array.from({ length: 24 }, (_, n) => n + 1);
      const answers = await Promise.all(
        numbers.map((n) =>
          postPullRequestEvent(replicas[n % 3]!.port, SECRET, `delivery-${n}`, { number: n, wait: 0 }, 'pr').then(
            (response) => response.status,
          ),
        ),
      );
      expect(answers).toEqual(numbers.map(() => 202));
      // The same deliveries again, each to a replica that did not take it: duplicates everywhere.
      const again = await Promise.all(
        numbers
          .slice(0, 6)
          .map((n) =>
            postPullRequestEvent(replicas[(n + 1) % 3]!.port, SECRET, `delivery-${n}`, { number: n, wait: 0 }, 'pr').then(
              (response) => response.status,
            ),
          ),
      );
      expect(again).toEqual([200, 200, 200, 200, 200, 200]);
      // 30 requests counted on the route across the three: the limit, so each refuses the next.
      for (const replica of replicas) {
        const over = await postPullRequestEvent(replica.port, SECRET, `delivery-over-${replica.port}`, { number: 99, wait: 0 }, 'pr');
        expect(over.status).toBe(429);
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      }

      expect(await within(30_000, async () => (await marks()).length >= numbers.length)).toBe(true);
      await sleep(1_000);
      await expectEachOnce(numbers);

      // The run records are in the database: the laptop reads every run, whoever ran it.
      const runs = await runAgent(['webhook', 'runs', '--json', '--limit', '100'], {
        home: join(work, 'laptop'),
        env: { AGENT_DATABASE_URL: scratch.url },
      });
      expect(runs.code).toBe(0);
      const records = JSON.parse(runs.stdout) as Array<{ route: string; outcome: string }>;
      expect(records).toHaveLength(numbers.length);
      expect(records.every((record) => record.route === 'pr' && record.outcome === 'delivered')).toBe(true);
    }, 120_000);

    it('runs a managed fire of a slot once, whichever replica the portal calls and however many it calls', async () => {
      const portal = await FakePortal.start();
      try {
        const managed = portal.managedSettings('http://127.0.0.1:1');
        const cron = [
          'cron:',
          '  provider: managed',
          '  managed:',
          ...Object.entries(managed).map(([key, value]) => `    ${key}: ${value}`),
        ];
        const env = { AGENT_CRON_SCHEDULER_TOKEN: portal.schedulerToken };
        const homes = await Promise.all(['a', 'b', 'c'].map((name) => replicaHome(name, scratch.url, { cron })));
        for (const { home, port } of homes) await startReplica(home, port, env);
        const laptop = join(work, 'laptop');
        await mkdir(laptop, { recursive: true });
        await writeFile(join(laptop, 'config.yaml'), `${cron.join('\n')}\n`);
        const numbers = Array.from({ length: 8 }, (_, n) => n + 1);
        const jobs: Array<{ id: string; slot: string }> = [];
        for (const n of numbers) {
          const created = await runAgent(
            ['cron', 'create', 'every 1h', `Do mark-${n} wait-0 now`, '--name', `fired ${n}`, '--deliver', 'local', '--no-tick'],
            {
              home: laptop,
              env: { ...env, AGENT_DATABASE_URL: scratch.url },
            },
          );
          expect(created.code).toBe(0);
          const id = /^Created job ([0-9a-f]{12}) /.exec(created.stdout)![1]!;
          const shown = JSON.parse(
            (await runAgent(['cron', 'show', id, '--json'], { home: laptop, env: { AGENT_DATABASE_URL: scratch.url } })).stdout,
          ) as { next_run_at: string };
          jobs.push({ id, slot: shown.next_run_at });
        }

        // Every slot fired at all three replicas at once, each fire with a token of its own.
        const answers = await Promise.all(
          jobs.map(async ({ id, slot }) =>
            Promise.all(
              replicas.map((replica) => portal.fire(`http://127.0.0.1:${replica.port}`, { job_id: id, fire_at: slot }, portal.mint(id))),
            ),
          ),
        );
        for (const perSlot of answers) {
          expect(perSlot.filter((answer) => answer.status === 202)).toHaveLength(1);
          expect(perSlot.filter((answer) => answer.status === 200 && (answer.body as { status?: string }).status === 'stale')).toHaveLength(
            2,
          );
        }
        expect(await within(30_000, async () => (await marks()).length >= numbers.length)).toBe(true);
        await sleep(1_000);
        await expectEachOnce(numbers);
      } finally {
        await portal.close();
      }
    }, 120_000);

    it('runs again, once, the events of a replica killed with -9 in the middle of its runs, after its lease lapsed', async () => {
      const homes = await Promise.all(['a', 'b', 'c'].map((name) => replicaHome(name, scratch.url, { maxRuns: 2, leaseSeconds: 3 })));
      for (const { home, port } of homes) await startReplica(home, port);
      await subscribeFromLaptop(scratch.url);

      // Runs of 12 s: longer than the lease and the pause between looks for gone gateways, so a
      // killed replica's agents are still going when the others take its events over (and stop
      // those agents before they finish).
      const numbers = Array.from({ length: 9 }, (_, n) => n + 1);
      for (const n of numbers) {
        const response = await postPullRequestEvent(replicas[n % 3]!.port, SECRET, `slow-${n}`, { number: n, wait: 12 }, 'pr');
        expect(response.status).toBe(202);
      }
      // Each replica takes what it can (two at a time); then the first dies with its runs.
      const victim = replicas[0]!;
      expect(await eventually(() => /running webhook|webhook accepted/.test(victim.output()), 10_000)).toBe(true);
      await sleep(1_500);
      await killNow(victim.gateway);
      // And comes back as a new process at once: it must not take over its predecessor's
      // events while the old lease holds, nor run them twice after.
      const back = await startReplica(victim.home, victim.port);

      expect(await within(90_000, async () => (await marks()).length >= numbers.length)).toBe(true);
      // An agent of the killed replica that outlived it would finish within 12 s of its start.
      await sleep(12_000);
      await expectEachOnce(numbers);

      const status = JSON.parse(
        (await runAgent(['status', '--json'], { home: join(work, 'laptop'), env: { AGENT_DATABASE_URL: scratch.url } })).stdout,
      ) as {
        replicas: Array<{ pid: number }>;
      };
      expect(status.replicas.map((replica) => replica.pid).sort()).toEqual(
        [replicas[1]!.gateway.pid, replicas[2]!.gateway.pid, back.gateway.pid].sort(),
      );
    }, 150_000);
  });

  describe('on a server of its own', () => {
    let server: PrivatePostgres;

    beforeEach(async () => {
      server = await privatePostgres();
    });

    afterEach(async () => {
      await killReplicas();
      await server.destroy();
    });

    it('answers 503 while PostgreSQL is away, and after it is back loses no accepted event, runs none twice and fires the job due meanwhile', async () => {
      const homes = await Promise.all(['a', 'b'].map((name) => replicaHome(name, server.url, { leaseSeconds: 30 })));
      for (const { home, port } of homes) await startReplica(home, port);
      await subscribeFromLaptop(server.url);

      /** Sends event `n` until one replica took it (202) or says it has it (200), as a code host retries. */
      const statuses: number[] = [];
      const deliver = async (n: number) => {
        for (let attempt = 0; attempt < 200; attempt += 1) {
          const replica = replicas[(n + attempt) % 2]!;
          const status = await postPullRequestEvent(replica.port, SECRET, `outage-${n}`, { number: n, wait: 0 }, 'pr').then(
            (response) => response.status,
            () => 0,
          );
          statuses.push(status);
          if (status === 202 || status === 200) return;
          await sleep(100);
        }
        throw new Error(`event ${n} was never accepted`);
      };

      // At least 30 events, and events go on being sent until the server is back, so that some
      // are sent while it is away however long the steps before the outage take on a busy machine.
      const numbers: number[] = [];
      let restarted = false;
      const sending = (async () => {
        for (let n = 1; n <= 30 || !restarted; n += 1) {
          numbers.push(n);
          await deliver(n);
          await sleep(50);
        }
      })();
      await eventually(() => statuses.length >= 8, 20_000);

      // A one-shot job that falls due while the database is away.
      const laptop = join(work, 'laptop');
      const dueAt = Date.now() + 4_000;
      const created = await runAgent(
        ['cron', 'create', iso(dueAt), 'Do mark-100 wait-0 now', '--name', 'during outage', '--deliver', 'local', '--no-tick'],
        {
          home: laptop,
          env: { AGENT_DATABASE_URL: server.url },
        },
      );
      expect(created.code).toBe(0);

      await server.stop();
      await sleep(300);
      for (const replica of replicas)
        if (replica.gateway.exitCode !== null) throw new Error(`a gateway exited when the database stopped:\n${replica.output()}`);
      // Nothing is accepted without a durable record: every replica answers 503 with Retry-After.
      for (const replica of replicas) {
        const away = await postPullRequestEvent(replica.port, SECRET, 'while-away', { number: 500, wait: 0 }, 'pr');
        expect(away.status).toBe(503);
        expect(Number(away.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      await sleep(Math.max(0, dueAt + 1_000 - Date.now()));
      await server.start();
      restarted = true;
      await sending;

      const allRan = await within(60_000, async () => (await marks()).length >= numbers.length + 1);
      if (!allRan) console.log((await marks()).join(' '), '\n', replicas.map((r) => r.output()).join('\n=====\n'));
      expect(allRan).toBe(true);
      await sleep(1_500);
      await expectEachOnce([...numbers, 100]);
      expect(statuses).toContain(503);
      // The outage is logged once by each part that met it, not once per try.
      for (const replica of replicas) {
        expect(replica.output().split('cannot take webhook events from the inbox').length - 1).toBeLessThanOrEqual(1);
        expect(replica.gateway.exitCode).toBeNull();
      }
    }, 150_000);
  });
});
