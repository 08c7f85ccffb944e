import 'reflect-metadata';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FileWebhookInbox } from '../../src/adapters/persistence/FileWebhookInbox.js';
import { agentPathsFor } from '../../src/adapters/persistence/agentPaths.js';
import { acceptRecord, journalName } from '../../src/adapters/persistence/webhookJournal.js';
import type { AgentPaths } from '../../src/application/ports/Settings.js';
import type { WebhookEvent } from '../../src/domain/webhook/WebhookEvent.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeProcessIdentity } from '../support/fakes/FakeProcessIdentity.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingOrphanProcesses } from '../support/fakes/RecordingOrphanProcesses.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Bytes this process holds in its JavaScript heap and in buffers, once garbage is collected. */
function heldBytes(): number {
  collectGarbage();
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

const MB = 1024 * 1024;

/** Event `n` with a payload of about `bytes` bytes that says which event it is all along. */
function eventWithPayload(n: number, bytes: number): { event: WebhookEvent; json: string } {
  const event = anEvent(n, { payload: { number: n, body: `${n}:`.repeat(Math.ceil(bytes / `${n}:`.length)).slice(0, bytes) } });
  return { event, json: JSON.stringify(event.payload) };
}

/**
 * A large backlog costs the inbox an index entry per event, not the event: payloads stay in the
 * journals and are read back when handed out (docs/webhooks.md, "What the inbox holds").
 */
describe('FileWebhookInbox with a large backlog', () => {
  let home: string;
  let paths: AgentPaths;
  let log: RecordingLogger;
  const clock = new ManualClock('2026-06-01T08:00:00Z');
  let opened: FileWebhookInbox[] = [];
  const open = (claimant = 'test-host:1', ...dead: string[]) => {
    const identity = new FakeProcessIdentity(claimant);
    for (const gone of dead) identity.dead.add(gone);
    const inbox = new FileWebhookInbox(paths, identity, clock, log, new RecordingOrphanProcesses());
    opened.push(inbox);
    return inbox;
  };
  const journalOf = (claimant: string) => join(paths.webhookInboxDir, journalName(claimant));

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-inbox-backlog-'));
    paths = agentPathsFor(home);
    log = new RecordingLogger();
  });

  afterEach(async () => {
    await Promise.all(opened.map((inbox) => inbox.close()));
    opened = [];
    await rm(home, { recursive: true, force: true });
  });

  it('hands out 5,000 events to runs under way at once: the slack kept for their ends grows with them', async () => {
    const inbox = open();
    const count = 5000;
    for (let start = 0; start < count; start += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, k) => inbox.accept(anEvent(start + k))));
    }
    const claimed: string[] = [];
    for (let event = await inbox.claimNext(); event !== null; event = await inbox.claimNext()) claimed.push(event.id);

    expect(claimed).toHaveLength(count);
    expect(log.entries.filter((entry) => entry.level === 'error')).toEqual([]);
    await Promise.all(claimed.map((id) => inbox.complete(id)));
    expect(await inbox.pending()).toBe(0);
  });

  it('holds 1,000 waiting events of 100 KB in less than 4 MB, before and after a restart, and hands each payload out exactly, in order', async () => {
    const count = 1000;
    const payloadBytes = 100 * 1024;
    const first = open();
    await first.pending();
    const before = heldBytes();
    for (let n = 0; n < count; n += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, k) => {
          const { event, json } = eventWithPayload(n + k, payloadBytes);
          return first.accept(event, json);
        }),
      );
    }
    const whileWaiting = heldBytes() - before;
    await first.close();

    const restartedFrom = heldBytes();
    const restarted = open();
    expect(await restarted.pending()).toBe(count);
    const afterRestart = heldBytes() - restartedFrom;

    // About 100 MB of payloads wait; what the inbox keeps of them is independent of their size.
    expect(whileWaiting).toBeLessThan(4 * MB);
    expect(afterRestart).toBeLessThan(4 * MB);
    for (let n = 0; n < count; n += 1) {
      const event = await restarted.claimNext();
      expect(event).toEqual({ ...eventWithPayload(n, payloadBytes).event, resumed: true });
      await restarted.complete(event!.id);
    }
    expect(await restarted.claimNext()).toBeNull();
    expect(await open('test-host:2', 'test-host:1').pending()).toBe(0);
  });

  it('keeps the index entry of a waiting event to a few hundred bytes, whatever the payload', async () => {
    const perEvent = async (payloadBytes: number, claimant: string) => {
      const inbox = open(claimant);
      await inbox.pending();
      const before = heldBytes();
      for (let n = 0; n < 2000; n += 200) {
        await Promise.all(
          Array.from({ length: 200 }, (_, k) => {
            const { event, json } = eventWithPayload(n + k, payloadBytes);
            return inbox.accept({ ...event, id: `${claimant}-${n + k}` }, json);
          }),
        );
      }
      const held = (heldBytes() - before) / 2000;
      await inbox.close();
      return held;
    };

    const small = await perEvent(100, 'test-host:1');
    const large = await perEvent(20 * 1024, 'test-host:2');

    expect(small).toBeLessThan(512);
    expect(large).toBeLessThan(512);
  });

  it('reads a journal of 20,000 events at a restart and hands out each once, in acceptance order, claimed ones again in their places', async () => {
    const count = 20_000;
    const lines: string[] = [];
    for (let n = 0; n < count; n += 1) {
      lines.push(acceptRecord(anEvent(n, { id: `e${n}` }), undefined, n % 3 === 0 ? `github:d-${n}` : undefined));
      // Runs of the first events started (and those of every seventh also ended) before the crash.
      if (n < 100) lines.push(`{"claim":"e${n}"}\n`);
      if (n < 100 && n % 7 === 0) lines.push(`{"done":"e${n}"}\n`);
    }
    await mkdir(paths.webhookInboxDir, { recursive: true });
    await writeFile(journalOf('test-host:9'), lines.join(''));
    const expected = Array.from({ length: count }, (_, n) => n)
      .filter((n) => !(n < 100 && n % 7 === 0))
      .map((n) => `e${n}`);

    const inbox = open('test-host:1', 'test-host:9');

    expect(await inbox.recover()).toBe(100 - 15);
    expect(await inbox.pending()).toBe(expected.length);
    // The delivery keys came back from the journal too.
    expect(await inbox.accept(anEvent(count, { id: 'again', receivedAt: clock.now().toISOString() }), undefined, 'github:d-19998')).toBe(
      false,
    );
    const handedOut: string[] = [];
    let ended: string[] = [];
    for (let event = await inbox.claimNext(); event !== null; event = await inbox.claimNext()) {
      handedOut.push(event.id);
      // Every thousandth run is still under way when the process is killed.
      if (handedOut.length % 1000 !== 1) ended.push(event.id);
      if (ended.length === 100) {
        await Promise.all(ended.map((id) => inbox.complete(id)));
        ended = [];
      }
    }
    await Promise.all(ended.map((id) => inbox.complete(id)));
    expect(handedOut).toEqual(expected);
    expect(log.entries).toEqual([]);

    // Killed before those completed: the next process hands out exactly those, once, in order.
    await inbox.close();
    const next = open('test-host:2', 'test-host:1');
    const rest: string[] = [];
    for (let event = await next.claimNext(); event !== null; event = await next.claimNext()) rest.push(event.id);
    expect(rest).toEqual(expected.filter((_, index) => index % 1000 === 0));
  });

  it('rewrites its journal behind a backlog of several MiB while accepts go on, and loses, repeats or reorders nothing', async () => {
    const payloadBytes = 8 * 1024;
    const inbox = open();
    const accepted: number[] = [];
    const acceptAll = async (numbers: number[]) => {
      await Promise.all(
        numbers.map((n) => {
          const { event, json } = eventWithPayload(n, payloadBytes);
          return inbox.accept(event, json, `github:d-${n}`).then(() => accepted.push(n));
        }),
      );
    };
    for (let n = 0; n < 2000; n += 100) await acceptAll(Array.from({ length: 100 }, (_, k) => n + k));
    const grown = (await stat(journalOf('test-host:1'))).size;

    // 1,600 done leave 400 events (3.2 MiB) waiting in a 16 MiB journal: it is rewritten alongside the accepts.
    const handedOut: number[] = [];
    for (let k = 0; k < 1600; k += 1) {
      const event = await inbox.claimNext();
      handedOut.push((event!.payload as { number: number }).number);
      await inbox.complete(event!.id);
    }
    await acceptAll(Array.from({ length: 300 }, (_, k) => 2000 + k));
    // The rewrite runs in the background: wait for it, with a deadline.
    let size = grown;
    for (const deadline = Date.now() + 20_000; size >= grown / 2 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      size = (await stat(journalOf('test-host:1'))).size;
    }
    expect(size).toBeLessThan(grown / 2);
    expect((await readdir(paths.webhookInboxDir)).sort()).toEqual([journalName('test-host:1')]);

    // What waits is what it was, in order, read from the rewritten journal; and so after a restart.
    await inbox.close();
    const restarted = open('test-host:2', 'test-host:1');
    expect(await restarted.accept(anEvent(999_999, { receivedAt: clock.now().toISOString() }), undefined, 'github:d-5')).toBe(false);
    for (let event = await restarted.claimNext(); event !== null; event = await restarted.claimNext()) {
      const { number } = event.payload as { number: number };
      expect(event).toEqual({ ...eventWithPayload(number, payloadBytes).event, resumed: true });
      handedOut.push(number);
      await restarted.complete(event.id);
    }
    expect(handedOut).toEqual([...accepted].sort((a, b) => a - b));
  });

  it('sets aside a record whose payload is damaged when it is read back, and hands out the next event instead', async () => {
    await mkdir(paths.webhookInboxDir, { recursive: true });
    const damaged = acceptRecord(anEvent(2)).replace('"payload":{"action":"opened"', '"payload":{"action":opened');
    await writeFile(journalOf('test-host:1'), acceptRecord(anEvent(1)) + damaged + acceptRecord(anEvent(3)));

    const inbox = open();

    expect((await inbox.claimNext())!.id).toBe('event-1');
    expect((await inbox.claimNext())!.id).toBe('event-3');
    expect(await inbox.claimNext()).toBeNull();
    const aside = join(paths.webhookInboxDir, 'damaged', `${journalName('test-host:1')}.lines`);
    expect(await readFile(aside, 'utf8')).toBe(damaged);
    expect(log.entries.filter((entry) => entry.level === 'error').map((entry) => entry.message)).toEqual([
      expect.stringMatching(/the record at byte \d+ of .*journal-test-host%3A1\.ndjson is not an inbox event: it is not valid JSON/),
    ]);
    await inbox.close();
    const restarted = open();
    expect(await restarted.pending()).toBe(2);
    expect((await restarted.claimNext())!.id).toBe('event-1');
    expect((await restarted.claimNext())!.id).toBe('event-3');
  });
});
