import type { JobRepository } from '../../src/application/ports/JobRepository.js';
import type { SchedulerContext, SchedulerProvider } from '../../src/application/ports/SchedulerProvider.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingFiringPath } from '../support/fakes/RecordingFiringPath.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';

/** A provider under test, with what drives it and what it did. */
export interface ProviderSubject {
  provider: SchedulerProvider;
  /** What the provider is started with: its run path is `fire`. */
  context: SchedulerContext;
  fire: RecordingFiringPath;
  /** Everything that makes a started provider act: its timers coming due, the store changing, a run ending. */
  prod(): Promise<void>;
  /** How many things the provider has done so far: looks and slots fired, calls to its backend. */
  activity(): number;
  cleanup?(): Promise<void>;
}

/** The pieces every subject's context is made of; `settings` and `env` are the provider's own. */
export function providerContext(settings: Record<string, unknown> = {}, env: Record<string, string | undefined> = {}) {
  const fire = new RecordingFiringPath();
  const context: SchedulerContext = {
    jobs: new InMemoryJobRepository(),
    fire,
    clock: new ManualClock('2030-01-01T00:00:00Z'),
    log: new RecordingLogger(),
    settings,
    env,
  };
  return { fire, context };
}

/** Lets the callbacks a prod queued run to their end (no timing: only queued work is awaited). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** A store every read and write of which fails, as an unreadable jobs.json does. */
const BROKEN_STORE: JobRepository = {
  load: async () => {
    throw new Error('the store cannot be read');
  },
  modify: async () => {
    throw new Error('the store cannot be written');
  },
} as unknown as JobRepository;

/** What every SchedulerProvider promises (docs/plugins.md, The contract), whoever wrote it. */
export function describeSchedulerProviderContract(name: string, makeSubject: () => Promise<ProviderSubject>): void {
  describe(`${name} keeps the SchedulerProvider contract`, () => {
    let subject: ProviderSubject;

    beforeEach(async () => {
      subject = await makeSubject();
    });

    afterEach(async () => {
      await subject.provider.stop();
      await subject.cleanup?.();
    });

    it('has a name and says it is usable where it is set up to be', () => {
      expect(typeof subject.provider.name).toBe('string');
      expect(subject.provider.name.trim()).not.toBe('');
      expect(subject.provider.problem()).toBeNull();
    });

    it('can be stopped before it was started, and twice', async () => {
      await expect(subject.provider.stop()).resolves.toBeUndefined();
      await expect(subject.provider.stop()).resolves.toBeUndefined();
    });

    it('fires nothing once stop has resolved, whatever happens after', async () => {
      await subject.provider.start(subject.context);
      await subject.provider.stop();
      await settle();
      const before = subject.activity();

      await subject.prod();
      await settle();

      expect(subject.activity()).toBe(before);
    });

    it('starts again after a stop and acts again', async () => {
      await subject.provider.start(subject.context);
      await subject.provider.stop();
      await settle();
      const before = subject.activity();

      await subject.provider.start(subject.context);
      await subject.prod();

      await eventually(() => subject.activity() > before);
    });

    it('takes a second start while started as one', async () => {
      await subject.provider.start(subject.context);
      await expect(subject.provider.start(subject.context)).resolves.toBeUndefined();
      await subject.provider.stop();
      await settle();
      const before = subject.activity();

      await subject.prod();
      await settle();

      expect(subject.activity()).toBe(before);
    });

    it('never throws from jobsChanged: before start, started, after stop, unknown and no ids', async () => {
      await expect(subject.provider.jobsChanged(['no-such-job'])).resolves.toBeUndefined();
      await subject.provider.start(subject.context);
      await expect(subject.provider.jobsChanged([])).resolves.toBeUndefined();
      await expect(subject.provider.jobsChanged(['no-such-job', 'no-such-job'])).resolves.toBeUndefined();
      await subject.provider.stop();
      await expect(subject.provider.jobsChanged(['no-such-job'])).resolves.toBeUndefined();
    });

    it('never throws from jobsChanged when the store cannot be read', async () => {
      await subject.provider.start(subject.context);
      await subject.provider.stop();
      const broken = { ...subject.context, jobs: BROKEN_STORE };
      await subject.provider.start(broken).catch(() => undefined);

      await expect(subject.provider.jobsChanged(['a-job'])).resolves.toBeUndefined();
    });
  });
}

/** Polls `condition` until it holds or 5 s have passed (real time only as a deadline, never as a wait). */
async function eventually(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the provider did nothing after it was started again');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
