import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { scratchDatabase, type ScratchDatabase } from '../support/postgres.js';
import { errorSentence, requireBuiltAgent, runAgent, startGatewayUntil } from './agentCli.js';
import { commandModelLines } from './configLines.js';

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Gateways on several machines sharing one PostgreSQL database: each has a home of its own. */
describe('gateway replicas on one PostgreSQL database', () => {
  let scratch: ScratchDatabase;
  let work: string;
  const gateways: ChildProcess[] = [];

  beforeAll(() => requireBuiltAgent());

  beforeEach(async () => {
    scratch = await scratchDatabase();
    work = await mkdtemp(join(tmpdir(), 'agent-replicas-'));
  });

  afterEach(async () => {
    await Promise.all(
      gateways.splice(0).map(async (gateway) => {
        if (gateway.exitCode === null && gateway.signalCode === null) {
          gateway.kill('SIGKILL');
          await once(gateway, 'exit');
        }
      }),
    );
    await scratch.drop();
    await rm(work, { recursive: true, force: true });
  });

  /** A home whose agent appends the mark its prompt carries to `ran.log`, shared by all. */
  async function home(name: string, databaseLine: boolean): Promise<string> {
    const dir = join(work, name);
    await rm(dir, { recursive: true, force: true });
    await (await import('node:fs/promises')).mkdir(dir, { recursive: true });
    const script = `while read -r line; do case $line in *mark-*) n=\${line##*mark-};; esac; done; echo "mark-$n" >> ${join(work, 'ran.log')}; echo done`;
    const lines = ['timezone: UTC', ...commandModelLines(['sh', '-c', script])];
    if (databaseLine) lines.push('database:', `  url: ${scratch.url}`);
    await writeFile(join(dir, 'config.yaml'), `${lines.join('\n')}\n`);
    return dir;
  }

  it('runs every slot of jobs created from the command line exactly once across three gateways', async () => {
    const homes = await Promise.all(['a', 'b', 'c'].map((name) => home(name, true)));
    for (const dir of homes) {
      const { gateway } = await startGatewayUntil(dir, 'gateway started', { withinMs: 20_000 });
      gateways.push(gateway);
    }
    // The command line of an operator's laptop: the database named in the environment.
    const laptop = await home('laptop', false);
    const env = { AGENT_DATABASE_URL: scratch.url };
    const dueAt = Date.now() + 8_000;
    const marks = Array.from({ length: 24 }, (_, n) => n + 1);
    for (let batch = 0; batch < marks.length; batch += 6) {
      await Promise.all(
        marks.slice(batch, batch + 6).map(async (n) => {
          // --no-tick: the gateways run the jobs, not this command on its way out.
          const created = await runAgent(
            ['cron', 'create', iso(dueAt), `Do mark-${n}`, '--name', `job ${n}`, '--deliver', 'local', '--no-tick'],
            { home: laptop, env },
          );
          expect(created.stderr).toBe('');
          expect(created.code).toBe(0);
        }),
      );
    }

    const jobs = async () =>
      JSON.parse((await runAgent(['cron', 'list', '--no-tick', '--json'], { home: laptop, env })).stdout) as Array<Record<string, any>>;
    const deadline = Date.now() + 60_000;
    while (!(await jobs()).every((job) => job.state === 'completed') && Date.now() < deadline) await sleep(250);

    const listed = await jobs();
    expect(listed).toHaveLength(marks.length);
    // A slot run twice would count two runs on its job.
    expect(listed.map((job) => job.repeat.completed)).toEqual(marks.map(() => 1));
    expect(listed.every((job) => job.last_status === 'ok')).toBe(true);
    const ran = (await readFile(join(work, 'ran.log'), 'utf8')).trim().split('\n').sort();
    expect(ran).toEqual(marks.map((n) => `mark-${n}`).sort());

    // agent status on the laptop lists every gateway holding a lease on the store.
    const status = JSON.parse((await runAgent(['status', '--json'], { home: laptop, env })).stdout) as {
      replicas: Array<{ pid: number; provider: string }>;
    };
    expect(status.replicas.map((replica) => replica.pid).sort()).toEqual(gateways.map((gateway) => gateway.pid!).sort());
    expect(status.replicas.every((replica) => replica.provider === 'built-in ticker')).toBe(true);
    const text = await runAgent(['status'], { home: laptop, env });
    expect(text.stdout).toMatch(/Gateways on the shared database \(3\):/);
  }, 120_000);

  it('says in one sentence, naming host and database but never the password, when the database cannot be reached', async () => {
    const dir = await home('offline', false);
    const run = await runAgent(['cron', 'list'], {
      home: dir,
      env: { AGENT_DATABASE_URL: 'postgres://agent:hunter2-secret@127.0.0.1:1/jobs' },
    });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toBe(
      'error: Cannot use the database 127.0.0.1:1/jobs: nothing listens there; check that PostgreSQL runs there and that AGENT_DATABASE_URL (or database.url) names it.',
    );
    expect(run.stderr).not.toContain('hunter2');
  });

  it('imports the jobs and webhook subscriptions of a home into the database keeping ids and secrets, and a second import changes nothing', async () => {
    const dir = await home('moving', false);
    const created = await runAgent(['cron', 'create', 'every 1h', 'Hourly digest', '--name', 'digest'], { home: dir });
    expect(created.code).toBe(0);
    const subscribed = await runAgent(['webhook', 'subscribe', 'deploys', '--prompt', 'Deployed {ref}', '--secret', 'kept-secret'], {
      home: dir,
    });
    expect(subscribed.code).toBe(0);
    const fileJobs = JSON.parse((await runAgent(['cron', 'list', '--json'], { home: dir })).stdout) as Array<{ id: string }>;
    const env = { AGENT_DATABASE_URL: scratch.url };

    const first = await runAgent(['db', 'import'], { home: dir, env });
    const second = await runAgent(['db', 'import'], { home: dir, env });

    expect(first.stdout).toMatch(/^Imported 1 job\(s\) into 127\.0\.0\.1:5432\/agent_test_\w+; 0 were there already\.$/m);
    expect(first.stdout).toMatch(/^Imported 1 webhook subscription\(s\) into 127\.0\.0\.1:5432\/agent_test_\w+; 0 were there already\.$/m);
    expect(second.stdout).toMatch(/Imported 0 job\(s\) .*; 1 were there already\./);
    expect(second.stdout).toMatch(/Imported 0 webhook subscription\(s\) .*; 1 were there already\./);
    const listed = await runAgent(['webhook', 'list', '--json'], { home: dir, env });
    expect(listed.stdout).toContain('deploys');
    const database = await scratch.open();
    const rows = await database.query<{ secret: string }>(
      "SELECT record->>'secret' AS secret FROM agent_webhook_subscriptions WHERE name = 'deploys'",
    );
    await database.close();
    expect(rows).toEqual([{ secret: 'kept-secret' }]);
    const inDatabase = JSON.parse((await runAgent(['cron', 'list', '--json'], { home: dir, env })).stdout) as Array<{
      id: string;
      name: string;
    }>;
    expect(inDatabase.map((job) => [job.id, job.name])).toEqual([[fileJobs[0]!.id, 'digest']]);
    const status = await runAgent(['db', 'status'], { home: dir, env });
    expect(status.stdout).toMatch(/1 jobs\s+applied \d{4}-/);
  });
});
