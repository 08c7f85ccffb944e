import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSchedulerProvider } from '../../src/adapters/scheduling/schedulerProviderPlugins.js';
import { FakeSchedulerProvider } from '../support/fakes/FakeSchedulerProvider.js';
import { InMemoryJobRepository } from '../support/fakes/InMemoryJobRepository.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { RecordingFiringPath } from '../support/fakes/RecordingFiringPath.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';

/** The example provider of docs/plugins.md, exactly as printed there. */
function exampleFromDocs(): string {
  const docs = readFileSync(new URL('../../docs/plugins.md', import.meta.url), 'utf8');
  const match = /<!-- example provider: index\.mjs -->\n```js\n([\s\S]*?)```/.exec(docs);
  if (!match) throw new Error('docs/plugins.md has no "<!-- example provider: index.mjs -->" block');
  return match[1]!;
}

describe('the example provider of docs/plugins.md', () => {
  let home: string;

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'agent-plugin-doc-'));
    await mkdir(join(home, 'plugins', 'every-few-seconds'), { recursive: true });
    await writeFile(join(home, 'plugins', 'every-few-seconds', 'index.mjs'), exampleFromDocs());
  });

  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('loads from $AGENT_HOME/plugins/<name>/, fires through the context and stops', async () => {
    const fire = new RecordingFiringPath();
    const log = new RecordingLogger();
    const builtIn = new FakeSchedulerProvider('built-in ticker');
    const provider = await startSchedulerProvider({
      name: 'every-few-seconds',
      places: { installationDir: join(home, 'no-installation'), agentHome: home },
      context: { jobs: new InMemoryJobRepository(), fire, clock: new ManualClock('2030-01-01T00:00:00Z'), log, settings: {}, env: {} },
      builtIn: () => builtIn,
    });

    expect(provider.name).toBe('every-few-seconds');
    expect(log.entries.filter((entry) => entry.level === 'warn')).toEqual([]);
    expect(fire.dueCalls).toBe(1);
    await provider.jobsChanged(['a']);
    expect(fire.dueCalls).toBe(2);
    fire.finishRun('a');
    expect(fire.dueCalls).toBe(3);

    await provider.stop();
    await provider.jobsChanged(['a']);
    expect(fire.dueCalls).toBe(3);
  });

  it('reports a bad setting through problem(), so the built-in ticker is used', async () => {
    const builtIn = new FakeSchedulerProvider('built-in ticker');
    const log = new RecordingLogger();
    const provider = await startSchedulerProvider({
      name: 'every-few-seconds',
      places: { installationDir: join(home, 'no-installation'), agentHome: home },
      context: {
        jobs: new InMemoryJobRepository(),
        fire: new RecordingFiringPath(),
        clock: new ManualClock('2030-01-01T00:00:00Z'),
        log,
        settings: { seconds: -1 },
        env: {},
      },
      builtIn: () => builtIn,
    });
    expect(provider).toBe(builtIn);
    expect(log.entries.map((entry) => entry.message)).toEqual([
      expect.stringContaining('cron.every-few-seconds.seconds must be a positive number'),
    ]);
  });
});
