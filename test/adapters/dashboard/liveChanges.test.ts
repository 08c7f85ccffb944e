import { LiveChanges, POLL_MS, type LiveEvent, type Repeat } from '../../../src/adapters/dashboard/liveChanges.js';
import { aRun, aTranscript } from '../../contract/RunLedger.contract.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';

const NOW = new Date('2026-06-20T12:00:00.000Z');

/** Timers that fire only when the test says so. */
function manualTimers() {
  const running = new Map<number, { ms: number; tick: () => void }>();
  let next = 0;
  const repeat: Repeat = (ms, tick) => {
    const id = (next += 1);
    running.set(id, { ms, tick });
    return () => running.delete(id);
  };
  return { repeat, running, fire: () => [...running.values()].forEach((each) => each.tick()) };
}

function setUp() {
  const clock = new ManualClock(NOW);
  const ledger = new InMemoryRunLedger(undefined, () => clock.now());
  let jobs: unknown = [{ id: 'job1', state: 'scheduled' }];
  const timers = manualTimers();
  const watchers = new Set<() => void>();
  const live = new LiveChanges(
    {
      runs: ledger,
      jobs: async () => jobs,
      watchJobs: (onChange) => {
        watchers.add(onChange);
        return () => watchers.delete(onChange);
      },
    },
    clock,
    timers.repeat,
  );
  const events: LiveEvent[] = [];
  return { clock, ledger, live, timers, watchers, events, setJobs: (value: unknown) => (jobs = value) };
}

describe('LiveChanges (the live pages of the dashboard)', () => {
  it('looks at nothing and runs no timer while no page listens, and stops once the last one went', async () => {
    const { live, timers, watchers, events } = setUp();
    expect(timers.running.size).toBe(0);

    const stopOne = live.listen((event) => events.push(event));
    const stopTwo = live.listen((event) => events.push(event));
    expect([...timers.running.values()].map((each) => each.ms)).toEqual([POLL_MS]);
    expect(watchers.size).toBe(1);

    stopOne();
    expect(timers.running.size).toBe(1);
    stopTwo();
    expect(timers.running.size).toBe(0);
    expect(watchers.size).toBe(0);
    expect(live.listening).toBe(0);
  });

  it('names the runs that started, changed or grew a transcript, and the jobs when they changed', async () => {
    const { ledger, live, events, setJobs, clock } = setUp();
    await ledger.save(aRun(1));
    live.listen((event) => events.push(event));
    await live.look();
    expect(events).toEqual([]);

    await ledger.save(aRun(2, { status: 'running', finished_at: null, answer: null }));
    clock.advance(10);
    await live.look();
    expect(events.at(-1)).toEqual({ id: String(NOW.getTime() + 10), topics: ['runs', 'run:run-2'] });

    await ledger.saveTranscript(aRun(2), aTranscript(2).slice(0, 1));
    await live.look();
    expect(events.at(-1)!.topics).toEqual(['runs', 'run:run-2']);

    await live.look();
    expect(events).toHaveLength(2);

    setJobs([{ id: 'job1', state: 'running' }]);
    await live.look();
    expect(events.at(-1)!.topics).toEqual(['jobs']);
  });

  it('looks at once when the job store says it changed', async () => {
    const { live, events, watchers, setJobs } = setUp();
    live.listen((event) => events.push(event));
    await live.look();
    setJobs([]);
    for (const changed of watchers) changed();
    await live.look();
    expect(events.map((event) => event.topics)).toEqual([['jobs']]);
  });

  it('looks at a run a page watches even when it is not among the newest', async () => {
    const { ledger, live, events } = setUp();
    await ledger.save(aRun(0, { status: 'running', finished_at: null, answer: null }));
    for (let n = 1; n <= 60; n += 1) await ledger.save(aRun(n, { subject: `job-${n}` }));
    live.listen((event) => events.push(event), 'run-0');
    await live.look();

    await ledger.save(aRun(0, { status: 'ok' }));
    await live.look();

    expect(events.at(-1)!.topics).toEqual(['runs', 'run:run-0']);
  });

  it('gives each event an id greater than the one before, even when the clock stands still', () => {
    const { live } = setUp();
    const ids = [live.nextId(), live.nextId(), live.mark().id];
    expect(ids.map(Number)).toEqual([NOW.getTime(), NOW.getTime() + 1, NOW.getTime() + 2]);
  });

  it("tells a page that comes back with one of this process's ids the topics it missed, and nothing when it missed nothing", async () => {
    const { ledger, live, events, clock } = setUp();
    live.listen((event) => events.push(event));
    await live.look();
    const seen = live.mark().id;
    await ledger.save(aRun(3));
    clock.advance(5);
    await live.look();
    const last = events.at(-1)!;

    expect(await live.since(seen)).toEqual({ id: last.id, topics: ['runs', 'run:run-3'] });
    expect(await live.since(last.id)).toBeNull();
    expect(await live.since(null)).toBeNull();
  });

  it('tells a page that comes back with an id of an earlier gateway what the ledger says changed since that time', async () => {
    const { ledger, live, clock } = setUp();
    const before = String(Date.UTC(2026, 5, 20, 8, 3, 30));
    await ledger.save(aRun(1)); // 08:01, ended 08:01:05: seen before
    await ledger.save(aRun(5)); // 08:05: started since
    await ledger.save(aRun(2, { status: 'running', finished_at: null, answer: null })); // still running
    clock.advance(1000);

    const missed = await live.since(before);

    expect(missed!.topics).toEqual(['jobs', 'runs', 'run:run-5', 'run:run-2']);
    expect(Number(missed!.id)).toBe(NOW.getTime() + 1000);
    expect((await live.since('not-an-id'))!.topics).toEqual(expect.arrayContaining(['jobs', 'runs']));
  });
});
