import 'reflect-metadata';
import { mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileChatReceiverLease } from '../../src/adapters/chat/FileChatReceiverLease.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { tryLockFile } from '../../src/adapters/persistence/fileLock.js';
import { FileTickLock } from '../../src/adapters/persistence/FileTickLock.js';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { acceptRecord, journalName } from '../../src/adapters/persistence/webhookJournal.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingOrphanProcesses } from '../support/fakes/RecordingOrphanProcesses.js';
import { bundleScript } from '../support/bundleScript.js';
import { exitOf, firstLineOf } from '../support/childProcesses.js';
import { spawn } from '../support/testProcesses.js';

/** How long the takeovers are tried while the holder collects its garbage. */
const TRYING_MS = 3_000;
const AT_LEAST_ROUNDS = 20;

/**
 * Every kernel lock lives on an open file that the program keeps referenced until it closes it:
 * Node closes a file nobody references when the garbage collector finds it, and the kernel lets
 * the lock go with it. The holder here drops every object that holds its locks and collects its
 * garbage every few milliseconds, while this process tries to take each lock over.
 */
describe('kernel locks of a live process, under garbage collection', () => {
  let home: string;
  let paths: AgentPaths;
  let bundleDirectory: string;
  let child: string;
  let opened: FileWebhookInbox[] = [];

  beforeAll(async () => {
    bundleDirectory = await mkdtemp(join(tmpdir(), 'agent-gc-child-'));
    child = await bundleScript(fileURLToPath(new URL('../support/holdKernelLocksChild.ts', import.meta.url)), bundleDirectory);
  });

  afterAll(async () => {
    await rm(bundleDirectory, { recursive: true, force: true });
  });

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-gc-locks-'));
    paths = agentPathsFor(home);
  });

  afterEach(async () => {
    await Promise.all(opened.map((inbox) => inbox.close()));
    opened = [];
    await rm(home, { recursive: true, force: true });
  });

  /** Whether this process could take the kernel lock on `path` (let go at once). */
  async function lockIsFree(path: string): Promise<boolean> {
    const handle = await open(path, 'a+');
    try {
      return await tryLockFile(handle);
    } finally {
      await handle.close();
    }
  }

  it('are never taken over while it lives, and are once it is killed', async () => {
    // A journal left by a dead process, which the holder takes over (and so keeps locked) first.
    await mkdir(paths.webhookInboxDir, { recursive: true });
    await writeFile(join(paths.webhookInboxDir, journalName('gone-host:1')), acceptRecord(anEvent(1)));
    const holder = spawn(process.execPath, ['--expose-gc', child, home], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = exitOf(holder);
    const [word, pidText] = (await firstLineOf(holder)).split(' ');
    expect(word).toBe('held');
    const claimant = `${hostname()}:${pidText}`;
    const journals = await readdir(paths.webhookInboxDir);
    expect(journals.filter((name) => name.startsWith(journalName(claimant).replace('.ndjson', '')))).toHaveLength(2);

    const orphans = new RecordingOrphanProcesses();
    const inbox = new FileWebhookInbox(
      paths,
      new FakeProcessIdentity('test-host:1'),
      new ManualClock('2026-06-01T08:00:00Z'),
      new RecordingLogger(),
      orphans,
    );
    opened.push(inbox);
    const lease = new FileChatReceiverLease(home);
    let rounds = 0;
    /** What was taken, and in which round first. */
    const taken = new Map<string, number>();
    const took = (what: string) => taken.set(what, taken.get(what) ?? rounds);
    for (const deadline = Date.now() + TRYING_MS; rounds < AT_LEAST_ROUNDS || Date.now() < deadline; rounds += 1) {
      if ((await inbox.recover()) > 0 || orphans.killedFor.length > 0) took('journal');
      if ((await inbox.claimNext()) !== null) took('an event');
      if (await lease.tryTake()) {
        took('chat receiving role');
        await lease.release();
      }
      if (await lockIsFree(`${paths.jobsFile}.lock`)) took('job store lock');
      const tick = await new FileTickLock(paths).tryAcquire();
      if (tick !== null) {
        took('tick lock');
        await tick.release();
      }
      if (holder.exitCode !== null) throw new Error(`the holder exited (${holder.exitCode}): ${(await exited).stderr}`);
    }
    expect(Object.fromEntries(taken)).toEqual({});
    expect(await readdir(paths.webhookInboxDir)).toEqual(expect.arrayContaining(journals));
    // Nothing was closed by the collector (Node warns when it closes a file).
    holder.kill('SIGKILL');
    const { stderr } = await exited;
    expect(stderr).not.toContain('on garbage collection');

    // Its files closed by the kernel, every kernel lock is free: the journals are taken over.
    expect(await lockIsFree(`${paths.jobsFile}.lock`)).toBe(true);
    expect(await lease.tryTake()).toBe(true);
    await lease.release();
    await inbox.recover();
    expect(orphans.killedFor).toEqual([claimant]);
    const ids: string[] = [];
    for (let event = await inbox.claimNext(); event !== null; event = await inbox.claimNext()) ids.push(event.id);
    expect(ids.sort()).toEqual(['event-1', 'event-2']);
  });
});
