import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { HostProcessIdentity } from '../../src/adapters/system/HostProcessIdentity.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeProcessIdentity } from '../fakes/FakeProcessIdentity.js';
import { ManualClock } from '../fakes/ManualClock.js';
import { RecordingLogger } from '../fakes/RecordingLogger.js';
import { bundleScript } from '../helpers/bundleScript.js';
import { exitOf, firstLineOf } from '../helpers/childProcesses.js';

describe('FileWebhookInbox', () => {
  let home: string;
  let paths: AgentPaths;
  let log: RecordingLogger;
  const clock = new ManualClock('2026-06-01T08:00:00Z');
  const queued = () => join(paths.webhookInboxDir, 'queued');

  const open = (identity = new FakeProcessIdentity()) => new FileWebhookInbox(paths, identity, clock, log);

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-inbox-'));
    paths = agentPathsFor(home);
    log = new RecordingLogger();
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('keeps one JSON file per event under $AGENT_HOME/webhooks/inbox/, files 0600 in directories 0700', async () => {
    await open().accept(anEvent(1));
    await open().accept(anEvent(2));

    const files = await readdir(queued());
    expect(files).toHaveLength(2);
    expect(JSON.parse(await readFile(join(queued(), files[0]!), 'utf8'))).toEqual(anEvent(1));
    expect((await stat(join(queued(), files[0]!))).mode & 0o777).toBe(0o600);
    for (const directory of [paths.webhooksDir, paths.webhookInboxDir, queued()]) {
      expect((await stat(directory)).mode & 0o777).toBe(0o700);
    }
  });

  it('names files by acceptance time and a counter, so the order holds when the clock stands still', async () => {
    const inbox = open();
    for (const n of [1, 2, 3]) await inbox.accept(anEvent(n));

    expect(await readdir(queued())).toEqual([
      '001780300800000-000000-event-1.json',
      '001780300800000-000001-event-2.json',
      '001780300800000-000002-event-3.json',
    ]);
  });

  it('serves events accepted by an instance to a new instance on the same home (a restart)', async () => {
    await open().accept(anEvent(1));

    const restarted = open(new FakeProcessIdentity('test-host:2'));

    expect(await restarted.recover()).toBe(0);
    expect(await restarted.claimNext()).toEqual(anEvent(1));
  });

  it('gives back claims of a process that was killed with SIGKILL while running the event', async () => {
    const bundleDirectory = await mkdtemp(join(tmpdir(), 'agent-inbox-child-'));
    try {
      const script = await bundleScript(fileURLToPath(new URL('../helpers/claimWebhookEventChild.ts', import.meta.url)), bundleDirectory);
      const inbox = new FileWebhookInbox(paths, new HostProcessIdentity(), clock, log);
      await inbox.accept(anEvent(1));
      const child = spawn(process.execPath, [script, home], { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = exitOf(child);
      expect(await firstLineOf(child)).toBe('event-1');
      expect(await inbox.claimNext()).toBeNull();

      child.kill('SIGKILL');
      expect((await exited).signal).toBe('SIGKILL');

      const afterRestart = new FileWebhookInbox(paths, new HostProcessIdentity(), clock, log);
      expect(await afterRestart.recover()).toBe(1);
      expect(await afterRestart.claimNext()).toEqual(anEvent(1));
    } finally {
      await rm(bundleDirectory, { recursive: true, force: true });
    }
  });

  it('gives back claims made under its own host and pid by an earlier process (a container restart)', async () => {
    await open().accept(anEvent(1));
    await open().claimNext();

    const sameClaimant = open();

    expect(await sameClaimant.recover()).toBe(1);
    expect((await sameClaimant.claimNext())!.id).toBe('event-1');
  });

  it('leaves claims of another host alone: it cannot tell whether that process lives', async () => {
    await open().accept(anEvent(1));
    await open(new FakeProcessIdentity('other-host:7')).claimNext();

    const inbox = open();

    expect(await inbox.recover()).toBe(0);
    expect(await inbox.claimNext()).toBeNull();
    expect(await inbox.pending()).toBe(1);
  });

  it('moves a file that is not an event aside, reports it, and hands out the next one', async () => {
    const inbox = open();
    await mkdir(queued(), { recursive: true });
    await writeFile(join(queued(), '000000000000001-000000-torn.json'), '{"id": "torn", "rou');
    await writeFile(join(queued(), '000000000000002-000000-shapeless.json'), '{"id": 5}');
    await inbox.accept(anEvent(1));

    expect((await inbox.claimNext())!.id).toBe('event-1');

    expect((await readdir(join(paths.webhookInboxDir, 'damaged'))).sort()).toEqual([
      '000000000000001-000000-torn.json',
      '000000000000002-000000-shapeless.json',
    ]);
    expect(log.entries.filter((entry) => entry.level === 'error').map((entry) => entry.message)).toEqual([
      expect.stringMatching(/torn\.json is not an accepted event: it is not valid JSON/),
      expect.stringMatching(/shapeless\.json is not an accepted event: its "id" is not a string/),
    ]);
    expect(await inbox.pending()).toBe(1);
  });

  it('removes on recovery the temporary file of an accept that died mid-write, once it is old', async () => {
    await mkdir(queued(), { recursive: true });
    const old = join(queued(), '.001780300700000-000000-event-9.json.123.1.tmp');
    const fresh = join(queued(), '.001780300800000-000000-event-10.json.124.1.tmp');
    await writeFile(old, '{"id":');
    await writeFile(fresh, '{"id":');
    const longAgo = new Date(clock.now().getTime() - 10 * 60_000);
    await utimes(old, longAgo, longAgo);
    await utimes(fresh, clock.now(), clock.now());

    await open().recover();

    expect(await readdir(queued())).toEqual(['.001780300800000-000000-event-10.json.124.1.tmp']);
  });

  it('reports an inbox it cannot create as WEBHOOK.INBOX_UNAVAILABLE', async () => {
    await mkdir(paths.webhooksDir, { recursive: true });
    await writeFile(paths.webhookInboxDir, 'a file where the inbox should be');

    await expect(open().accept(anEvent(1))).rejects.toMatchObject({ code: 'WEBHOOK.INBOX_UNAVAILABLE' });
  });
});
