import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingOrphanProcesses } from '../support/fakes/RecordingOrphanProcesses.js';

/** A 2 MiB tmpfs to fill, or why there is none (mounting needs root, or CAP_SYS_ADMIN in a container). */
function mountSmallDisk(): { path: string } | { skipped: string } {
  const path = mkdtempSync(join(tmpdir(), 'agent-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', path], { stdio: 'pipe' });
    return { path };
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    const said = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    return { skipped: `this machine cannot mount a tmpfs (${said})` };
  }
}

const disk = mountSmallDisk();
// Skipped only where no tmpfs can be mounted (not root, no CAP_SYS_ADMIN): there is no disk to fill then.
const describeOnSmallDisk = 'path' in disk ? describe : describe.skip;

/** Writes a file until the disk has no room left; returns its path. */
async function fillDisk(directory: string): Promise<string> {
  const filler = join(directory, 'filler');
  const handle = await open(filler, 'w');
  const chunk = Buffer.alloc(4096, 0x78);
  try {
    for (;;) await handle.write(chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    await handle.close();
  }
  return filler;
}

describeOnSmallDisk(`FileWebhookInbox on a full disk${'skipped' in disk ? ` (skipped: ${disk.skipped})` : ''}`, () => {
  const root = 'path' in disk ? disk.path : '';
  let paths: AgentPaths;
  let log: RecordingLogger;
  const clock = new ManualClock('2026-06-01T08:00:00Z');
  const opened: FileWebhookInbox[] = [];
  const inboxAs = (claimant: string) => {
    const inbox = new FileWebhookInbox(paths, new FakeProcessIdentity(claimant), clock, log, new RecordingOrphanProcesses());
    opened.push(inbox);
    return inbox;
  };

  beforeEach(() => {
    paths = agentPathsFor(join(root, 'home'));
    log = new RecordingLogger();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((inbox) => inbox.close()));
    await rm(join(root, 'home'), { recursive: true, force: true });
    await rm(join(root, 'filler'), { force: true });
  });

  afterAll(() => {
    if (!('path' in disk)) return;
    execFileSync('umount', [disk.path]);
    rmSync(disk.path, { recursive: true, force: true });
  });

  it('records the end of every run under way, starts none it could not record the end of, restarts without free space, and runs each event once', async () => {
    const handedOut: string[] = [];
    const claimAll = async (inbox: FileWebhookInbox) => {
      const ids: string[] = [];
      for (let event = await inbox.claimNext(); event !== null; event = await inbox.claimNext()) ids.push(event.id);
      handedOut.push(...ids);
      return ids;
    };
    const first = inboxAs('test-host:1');
    for (let n = 1; n <= 20; n += 1) await first.accept(anEvent(n));
    const running = [await first.claimNext(), await first.claimNext()].map((event) => event!.id);
    handedOut.push(...running);

    const filler = await fillDisk(root);
    // Accepts use the slack while there is more than the runs under way need, then fail (a 503 for the sender).
    let accepted = 0;
    let refused: unknown = null;
    for (let n = 100; n < 5000 && refused === null; n += 1) {
      await first.accept(anEvent(n, { payload: { text: 'x'.repeat(2000) } })).then(
        () => (accepted += 1),
        (error: unknown) => (refused = error),
      );
    }
    expect(refused).toMatchObject({ code: 'WEBHOOK.INBOX_UNAVAILABLE' });

    // The runs under way record their end all the same.
    for (const id of running) await first.complete(id);
    // What the slack still holds room for may start; then nothing more does, and the log says why.
    const startedOnFullDisk: string[] = [];
    for (let started = await claimAll(first); started.length > 0; started = await claimAll(first)) {
      for (const id of started) await first.complete(id);
      startedOnFullDisk.push(...started);
    }
    expect(await first.claimNext()).toBeNull();
    expect(log.entries.filter((entry) => /disk holding .* is full/.test(entry.message))).toHaveLength(1);
    const waiting = await first.pending();
    expect(waiting).toBe(20 + accepted - running.length - startedOnFullDisk.length);

    // A gateway killed on the full disk, and another one starting there: nothing to copy, nothing lost.
    await first.close();
    const second = inboxAs('test-host:2');
    expect(await second.recover()).toBe(0);
    expect(await second.pending()).toBe(waiting);
    expect(await second.claimNext()).toBeNull();

    // Room again: everything left runs, once.
    await rm(filler);
    const rest = await claimAll(second);
    expect(rest).toHaveLength(waiting);
    for (const id of rest) await second.complete(id);
    await second.close();
    const third = inboxAs('test-host:3');
    expect(await third.pending()).toBe(0);
    expect(new Set(handedOut).size).toBe(handedOut.length);
    expect(handedOut).toHaveLength(20 + accepted);
  });
});
