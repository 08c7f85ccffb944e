import 'reflect-metadata';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { acceptRecord, claimRecord, doneRecord, journalName } from '../../src/adapters/persistence/webhookJournal.js';
import { HostProcessIdentity } from '../../src/adapters/system/HostProcessIdentity.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingOrphanProcesses } from '../support/fakes/RecordingOrphanProcesses.js';
import { bundleScript } from '../support/bundleScript.js';
import { exitOf, firstLineOf } from '../support/childProcesses.js';
import { eventually, isRunning } from '../support/processLiveness.js';
import { registerPid, spawn } from '../support/testProcesses.js';

describe('FileWebhookInbox', () => {
  let home: string;
  let paths: AgentPaths;
  let log: RecordingLogger;
  let orphans: RecordingOrphanProcesses;
  const clock = new ManualClock('2026-06-01T08:00:00Z');
  const inboxFile = (name: string) => join(paths.webhookInboxDir, name);
  const journalOf = (claimant: string) => inboxFile(journalName(claimant));
  const linesOf = async (path: string) => (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '');

  let opened: FileWebhookInbox[] = [];
  const open = (identity = new FakeProcessIdentity()) => {
    const inbox = new FileWebhookInbox(paths, identity, clock, log, orphans);
    opened.push(inbox);
    return inbox;
  };
  /** An identity for `claimant` that knows the listed claimants are gone. */
  const identity = (claimant: string, ...dead: string[]) => {
    const fake = new FakeProcessIdentity(claimant);
    for (const gone of dead) fake.dead.add(gone);
    return fake;
  };
  async function drainIds(inbox: FileWebhookInbox): Promise<string[]> {
    const ids: string[] = [];
    for (let event = await inbox.claimNext(); event !== null; event = await inbox.claimNext()) ids.push(event.id);
    return ids;
  }

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-inbox-'));
    paths = agentPathsFor(home);
    log = new RecordingLogger();
    orphans = new RecordingOrphanProcesses();
  });

  afterEach(async () => {
    await Promise.all(opened.map((inbox) => inbox.close()));
    opened = [];
    await rm(home, { recursive: true, force: true });
  });

  it('journals accepts, claims and completions in a file of its own process under $AGENT_HOME/webhooks/inbox/, 0600 in 0700 directories', async () => {
    const inbox = open();
    await inbox.accept(anEvent(1));
    await inbox.accept(anEvent(2));
    await inbox.claimNext();
    await inbox.complete('event-1');

    expect(await readdir(paths.webhookInboxDir)).toEqual(['journal-test-host%3A1.ndjson']);
    expect(await linesOf(journalOf('test-host:1'))).toEqual([
      acceptRecord(anEvent(1)).trim(),
      acceptRecord(anEvent(2)).trim(),
      claimRecord('event-1').trim(),
      doneRecord('event-1').trim(),
    ]);
    expect((await stat(journalOf('test-host:1'))).mode & 0o777).toBe(0o600);
    for (const directory of [paths.webhooksDir, paths.webhookInboxDir]) {
      expect((await stat(directory)).mode & 0o777).toBe(0o700);
    }
  });

  it('journals the payload as the JSON text it came as when that fits on one line, and encodes it otherwise', async () => {
    const inbox = open();
    const sent = '{ "action" : "opened", "number":1 , "pull_request":{"title":"PR 1","labels":[{"name":"bug"}]}}';
    await inbox.accept(anEvent(1), sent);
    await inbox.accept(anEvent(2), JSON.stringify(anEvent(2).payload, null, 2));

    const [first, second] = await linesOf(journalOf('test-host:1'));
    expect(first).toContain(`"payload":${sent}}}`);
    expect(JSON.parse(first!)).toEqual({ accept: anEvent(1) });
    expect(second).toBe(acceptRecord(anEvent(2)).trim());
  });

  it('keeps acceptance order for events accepted at the same moment', async () => {
    const inbox = open();
    await Promise.all([1, 2, 3, 4, 5].map((n) => inbox.accept(anEvent(n))));

    expect(await drainIds(inbox)).toEqual(['event-1', 'event-2', 'event-3', 'event-4', 'event-5']);
  });

  it('gives back the events of a process that was killed with SIGKILL while running one', async () => {
    const bundleDirectory = await mkdtemp(join(tmpdir(), 'agent-inbox-child-'));
    try {
      const script = await bundleScript(fileURLToPath(new URL('../support/claimWebhookEventChild.ts', import.meta.url)), bundleDirectory);
      const child = spawn(process.execPath, [script, home], { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = exitOf(child);
      expect((await firstLineOf(child)).split(' ')[0]).toBe('event-1');

      const whileItRuns = new FileWebhookInbox(paths, new HostProcessIdentity(), clock, log, orphans);
      opened.push(whileItRuns);
      expect(await whileItRuns.recover()).toBe(0);
      expect(await whileItRuns.claimNext()).toBeNull();

      child.kill('SIGKILL');
      expect((await exited).signal).toBe('SIGKILL');

      expect(await whileItRuns.recover()).toBe(1);
      expect(await whileItRuns.claimNext()).toEqual({ ...anEvent(1), resumed: true });
      expect(await whileItRuns.pending()).toBe(1);
    } finally {
      await rm(bundleDirectory, { recursive: true, force: true });
    }
  });

  it('takes over, while running, the journal of a process killed with SIGKILL that nobody reaped (a zombie)', async () => {
    const bundleDirectory = await mkdtemp(join(tmpdir(), 'agent-inbox-child-'));
    try {
      const script = await bundleScript(fileURLToPath(new URL('../support/claimWebhookEventChild.ts', import.meta.url)), bundleDirectory);
      // The shell starts the child, then becomes `sleep`, which never collects its children.
      const shell = spawn('sh', ['-c', '"$0" "$1" "$2" & exec sleep 60', process.execPath, script, home], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      try {
        const [id, pidText] = (await firstLineOf(shell)).split(' ');
        expect(id).toBe('event-1');
        const pid = Number(pidText);
        // Not the shell's child once the shell is gone: killed by the registry all the same if the test fails.
        registerPid(pid);
        const running = new FileWebhookInbox(paths, new HostProcessIdentity(), clock, log, orphans);
        opened.push(running);
        expect(await running.recover()).toBe(0);

        process.kill(pid, 'SIGKILL');
        expect(await eventually(() => !isRunning(pid), 15_000)).toBe(true);
        // Still there for signal 0, as the inbox used to judge it: alive.
        expect(() => process.kill(pid, 0)).not.toThrow();
        expect(new HostProcessIdentity().isAlive(`${hostname()}:${pid}`)).toBe(false);

        // The kernel closes a dying process's files, and lets its lock go, a moment after it
        // exits: the gateway looks again at every poll. (Its claim note may not have reached
        // the disk before the kill, so the count returned is 0 or 1.)
        for (let poll = 0; poll < 150 && orphans.killedFor.length === 0; poll += 1) {
          await running.recover();
          if (orphans.killedFor.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(orphans.killedFor).toEqual([`${hostname()}:${pid}`]);
        expect(await running.claimNext()).toEqual({ ...anEvent(1), resumed: true });
      } finally {
        shell.kill('SIGKILL');
      }
    } finally {
      await rm(bundleDirectory, { recursive: true, force: true });
    }
  });

  it('takes over the journal an earlier process left under its own host and pid (a container restart)', async () => {
    const earlier = open();
    await earlier.accept(anEvent(1));
    await earlier.accept(anEvent(2));
    await earlier.claimNext();
    await earlier.close();

    const sameClaimant = open();

    expect(await sameClaimant.recover()).toBe(1);
    expect(await drainIds(sameClaimant)).toEqual(['event-1', 'event-2']);
    expect(await readdir(paths.webhookInboxDir)).toEqual(['journal-test-host%3A1.ndjson']);
  });

  it('leaves alone the journals whose processes hold them, on this host or another', async () => {
    await open(identity('test-host:2')).accept(anEvent(1));
    await open(identity('other-host:7')).accept(anEvent(2));

    const inbox = open();

    expect(await inbox.recover()).toBe(0);
    expect(await inbox.claimNext()).toBeNull();
    expect(await linesOf(journalOf('test-host:2'))).toEqual([acceptRecord(anEvent(1)).trim()]);
    expect(await linesOf(journalOf('other-host:7'))).toEqual([acceptRecord(anEvent(2)).trim()]);
  });

  it('lets only one of two processes recovering at once take over a dead journal', async () => {
    const dead = open(identity('test-host:9'));
    for (const n of [1, 2, 3]) await dead.accept(anEvent(n));
    await dead.complete('event-2');
    await dead.close();
    const first = open(identity('test-host:1', 'test-host:9'));
    const second = open(identity('test-host:2', 'test-host:9'));

    await Promise.all([first.recover(), second.recover()]);

    const byFirst = await drainIds(first);
    const bySecond = await drainIds(second);
    expect([...byFirst, ...bySecond].sort()).toEqual(['event-1', 'event-3']);
    // The journal taken over is kept, locked, until its events are done, then removed.
    expect((await readdir(paths.webhookInboxDir)).filter((name) => name.includes('+'))).toHaveLength(1);
    for (const id of byFirst) await first.complete(id);
    for (const id of bySecond) await second.complete(id);
    await Promise.all([first.close(), second.close()]);
    expect((await readdir(paths.webhookInboxDir)).sort()).toEqual(['journal-test-host%3A1.ndjson', 'journal-test-host%3A2.ndjson']);
  });

  it('hands out once an event found twice, as after a crash in the middle of a takeover', async () => {
    await mkdir(paths.webhookInboxDir, { recursive: true });
    await writeFile(journalOf('test-host:9'), acceptRecord(anEvent(1)) + acceptRecord(anEvent(2)) + doneRecord('event-2'));
    await writeFile(inboxFile(journalName('test-host:9', '1780300800000-1')), acceptRecord(anEvent(1)) + acceptRecord(anEvent(2)));

    const inbox = open(identity('test-host:1', 'test-host:9'));

    expect(await inbox.recover()).toBe(0);
    expect(await drainIds(inbox)).toEqual(['event-1']);
  });

  it('ignores a record cut short at the end of a journal, with a warning, and keeps the rest', async () => {
    await mkdir(paths.webhookInboxDir, { recursive: true });
    await writeFile(journalOf('test-host:1'), acceptRecord(anEvent(1)) + acceptRecord(anEvent(2)).slice(0, 40));

    const inbox = open();

    expect(await drainIds(inbox)).toEqual(['event-1']);
    expect(log.entries).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringMatching(/ends in a record cut short/) })]);
  });

  it('copies a line that is no record to damaged/, reports it, and hands out the events around it', async () => {
    await mkdir(paths.webhookInboxDir, { recursive: true });
    const shapeless = '{"accept":{"id":5}}';
    await writeFile(journalOf('test-host:1'), `${acceptRecord(anEvent(1))}not json\n${shapeless}\n${acceptRecord(anEvent(2))}`);

    const inbox = open();

    expect(await drainIds(inbox)).toEqual(['event-1', 'event-2']);
    const aside = join(paths.webhookInboxDir, 'damaged', 'journal-test-host%3A1.ndjson.lines');
    expect(await readFile(aside, 'utf8')).toBe(`not json\n${shapeless}\n`);
    expect(log.entries.filter((entry) => entry.level === 'error').map((entry) => entry.message)).toEqual([
      expect.stringMatching(/line 2 of .*journal-test-host%3A1\.ndjson is not an inbox record: it is not valid JSON/),
      expect.stringMatching(/line 3 of .*journal-test-host%3A1\.ndjson is not an inbox record: its "id" is not a string/),
    ]);
  });

  it('takes over the events of the earlier one-file-per-event layout, and removes its files', async () => {
    const queued = join(paths.webhookInboxDir, 'queued');
    const deadClaims = join(paths.webhookInboxDir, 'claimed', encodeURIComponent('test-host:9'));
    const liveClaims = join(paths.webhookInboxDir, 'claimed', encodeURIComponent('test-host:2'));
    for (const directory of [queued, deadClaims, liveClaims]) await mkdir(directory, { recursive: true });
    await writeFile(join(queued, '001780300800000-000002-event-3.json'), JSON.stringify(anEvent(3)));
    await writeFile(join(queued, '001780300800000-000003-torn.json'), '{"id": "torn", "rou');
    await writeFile(join(deadClaims, '001780300800000-000000-event-1.json'), JSON.stringify(anEvent(1)));
    await writeFile(join(liveClaims, '001780300800000-000001-event-2.json'), JSON.stringify(anEvent(2)));

    const inbox = open(identity('test-host:1', 'test-host:9'));

    expect(await inbox.recover()).toBe(1);
    expect(await drainIds(inbox)).toEqual(['event-1', 'event-3']);
    expect((await readdir(paths.webhookInboxDir)).sort()).toEqual(['claimed', 'damaged', 'journal-test-host%3A1.ndjson']);
    expect(await readdir(join(paths.webhookInboxDir, 'claimed'))).toEqual([encodeURIComponent('test-host:2')]);
    expect(await readdir(join(paths.webhookInboxDir, 'damaged'))).toEqual(['001780300800000-000003-torn.json']);
  });

  it('rewrites its journal with only the live events and claims once it has grown past 4 MiB of finished ones', async () => {
    const inbox = open();
    const big = (n: number) => anEvent(n, { payload: { text: 'x'.repeat(8 * 1024) } });
    await inbox.accept(big(0));
    await inbox.claimNext();
    for (let round = 0; round < 12; round += 1) {
      const ids = Array.from({ length: 50 }, (_, n) => 1 + round * 50 + n);
      await Promise.all(ids.map((n) => inbox.accept(big(n), undefined, `github:d-${n}`)));
      for (let claimed = 0; claimed < ids.length; claimed += 1) await inbox.claimNext();
      await Promise.all(ids.map((n) => inbox.complete(`event-${n}`)));
    }

    expect((await stat(journalOf('test-host:1'))).size).toBeLessThan(4 * 1024 * 1024);
    await inbox.close();
    const restarted = open(identity('test-host:2', 'test-host:1'));
    // The claim of the one event still running survived the rewrites too.
    expect(await restarted.recover()).toBe(1);
    expect(await drainIds(restarted)).toEqual(['event-0']);
    // The deliveries of finished events, rewritten away, are still remembered.
    expect(await restarted.accept(anEvent(1000), undefined, 'github:d-1')).toBe(false);
    expect(await restarted.accept(anEvent(1001), undefined, 'github:d-600')).toBe(false);
  });

  it('stores a repeated delivery again once an hour has passed since the first, after a restart too', async () => {
    const later = new ManualClock('2026-06-01T08:00:00Z');
    const first = new FileWebhookInbox(paths, new FakeProcessIdentity(), later, log, orphans);
    opened.push(first);
    expect(await first.accept(anEvent(1), undefined, 'github:d-1')).toBe(true);
    await first.close();

    later.advance(59 * 60_000);
    const withinTheHour = new FileWebhookInbox(paths, new FakeProcessIdentity(), later, log, orphans);
    opened.push(withinTheHour);
    expect(await withinTheHour.accept(anEvent(2), undefined, 'github:d-1')).toBe(false);
    await withinTheHour.close();

    later.advance(61_000);
    const afterTheHour = new FileWebhookInbox(paths, new FakeProcessIdentity(), later, log, orphans);
    opened.push(afterTheHour);
    expect(await afterTheHour.accept(anEvent(3), undefined, 'github:d-1')).toBe(true);
    expect(await drainIds(afterTheHour)).toEqual(['event-1', 'event-3']);
  });

  it('lets the journal grow while more than 1 MiB of events wait, and rewrites it once the backlog is smaller', async () => {
    const inbox = open();
    const big = (n: number) => anEvent(n, { payload: { text: 'x'.repeat(8 * 1024) } });
    const ids = Array.from({ length: 600 }, (_, n) => n);
    await Promise.all(ids.map((n) => inbox.accept(big(n))));
    await Promise.all(ids.slice(0, 400).map((n) => inbox.complete(`event-${n}`)));
    const size = async () => (await stat(journalOf('test-host:1'))).size;

    // 200 events (1.6 MiB) still wait in a file of 4.8 MiB: no rewrite.
    const before = await size();
    await inbox.accept(big(600));
    expect(await size()).toBeGreaterThanOrEqual(before);

    await Promise.all(ids.slice(400, 550).map((n) => inbox.complete(`event-${n}`)));
    await inbox.accept(big(601));
    expect(await size()).toBeLessThan(1024 * 1024);
    expect(await inbox.pending()).toBe(52);
  });

  it('removes on first use the temporary file of a process that died while replacing its journal, once it is old', async () => {
    await mkdir(paths.webhookInboxDir, { recursive: true });
    const old = inboxFile('.journal-test-host%3A9.ndjson.123.1.tmp');
    const fresh = inboxFile('.journal-test-host%3A8.ndjson.124.1.tmp');
    await writeFile(old, '{"accept":');
    await writeFile(fresh, '{"accept":');
    const longAgo = new Date(clock.now().getTime() - 10 * 60_000);
    await utimes(old, longAgo, longAgo);
    await utimes(fresh, clock.now(), clock.now());

    await open().recover();

    expect((await readdir(paths.webhookInboxDir)).sort()).toEqual([
      '.journal-test-host%3A8.ndjson.124.1.tmp',
      'journal-test-host%3A1.ndjson',
    ]);
  });

  it('reports an inbox it cannot create as WEBHOOK.INBOX_UNAVAILABLE, and works once the way is clear', async () => {
    await mkdir(paths.webhooksDir, { recursive: true });
    await writeFile(paths.webhookInboxDir, 'a file where the inbox should be');
    const inbox = open();

    await expect(inbox.accept(anEvent(1))).rejects.toMatchObject({ code: 'WEBHOOK.INBOX_UNAVAILABLE' });

    await rm(paths.webhookInboxDir);
    await inbox.accept(anEvent(1));
    expect(await inbox.pending()).toBe(1);
  });
});
