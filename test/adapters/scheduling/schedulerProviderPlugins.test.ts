import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SchedulerContext, SchedulerProvider } from '../../../src/application/ports/SchedulerProvider.js';
import { startSchedulerProvider, providerToNotify } from '../../../src/adapters/scheduling/schedulerProviderPlugins.js';
import { FakeSchedulerProvider } from '../../support/fakes/FakeSchedulerProvider.js';
import { InMemoryJobRepository } from '../../support/fakes/InMemoryJobRepository.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { RecordingFiringPath } from '../../support/fakes/RecordingFiringPath.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

/** A plugin module that records, in a global, what it was asked to do. */
function pluginSource(body: { create?: string; start?: string; problem?: string } = {}): string {
  return `
export function createSchedulerProvider(context) {
  ${body.create ?? ''}
  const calls = (globalThis.__pluginCalls ??= []);
  return {
    name: 'tested',
    problem() { return ${body.problem ?? 'null'}; },
    async start(ctx) { ${body.start ?? ''} calls.push('start'); },
    async stop() { calls.push('stop'); },
    async jobsChanged(ids) { calls.push('changed:' + ids.join(',')); },
  };
}
`;
}

describe('choosing the scheduler provider', () => {
  let root: string;
  let installationDir: string;
  let agentHome: string;
  let log: RecordingLogger;
  let context: SchedulerContext;
  let builtIn: FakeSchedulerProvider;
  let pluginCount = 0;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'agent-providers-'));
    installationDir = join(root, 'installation');
    agentHome = join(root, 'home');
    await mkdir(installationDir, { recursive: true });
    await mkdir(agentHome, { recursive: true });
    log = new RecordingLogger();
    context = {
      jobs: new InMemoryJobRepository(),
      fire: new RecordingFiringPath(),
      clock: new ManualClock('2030-01-01T00:00:00Z'),
      log,
      settings: {},
      env: {},
    };
    builtIn = new FakeSchedulerProvider('built-in ticker');
    (globalThis as { __pluginCalls?: string[] }).__pluginCalls = [];
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Writes a plugin under a fresh name (modules are cached by path) and returns the name. */
  async function writePlugin(place: 'installation' | 'home', files: Record<string, string>): Promise<string> {
    pluginCount += 1;
    const name = `tested${pluginCount}`;
    const dir = place === 'installation' ? join(installationDir, 'plugins', 'cron_providers', name) : join(agentHome, 'plugins', name);
    await mkdir(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), text);
    }
    return name;
  }

  const choose = (name: string | undefined): Promise<SchedulerProvider> =>
    startSchedulerProvider({ name, places: { installationDir, agentHome }, context, builtIn: () => builtIn });
  const warnings = () => log.entries.filter((entry) => entry.level === 'warn').map((entry) => entry.message);
  const pluginCalls = () => (globalThis as { __pluginCalls?: string[] }).__pluginCalls ?? [];

  it('uses the built-in ticker without a word when cron.provider is empty', async () => {
    expect(await choose(undefined)).toBe(builtIn);
    expect(await choose('  ')).toBe(builtIn);
    expect(builtIn.running).toBe(true);
    expect(warnings()).toEqual([]);
  });

  it('loads and starts a provider from the installation, index.mjs as entry point', async () => {
    const name = await writePlugin('installation', { 'index.mjs': pluginSource() });
    const provider = await choose(name);
    expect(provider.name).toBe('tested');
    expect(pluginCalls()).toEqual(['start']);
    expect(builtIn.running).toBe(false);
    expect(warnings()).toEqual([]);
  });

  it('loads a provider from $AGENT_HOME/plugins/<name>/ through package.json exports', async () => {
    const name = await writePlugin('home', {
      'package.json': JSON.stringify({ name: 'p', type: 'module', exports: { '.': { import: './lib/main.js' } } }),
      'lib/main.js': pluginSource(),
    });
    expect((await choose(name)).name).toBe('tested');
  });

  it('loads a provider through package.json main', async () => {
    const name = await writePlugin('home', {
      'package.json': JSON.stringify({ name: 'p', type: 'module', main: 'entry.js' }),
      'entry.js': pluginSource(),
    });
    expect((await choose(name)).name).toBe('tested');
  });

  it('prefers the installation to $AGENT_HOME', async () => {
    const name = await writePlugin('installation', { 'index.mjs': pluginSource() });
    await mkdir(join(agentHome, 'plugins', name), { recursive: true });
    await writeFile(join(agentHome, 'plugins', name, 'index.mjs'), 'throw new Error("not me");');
    expect((await choose(name)).name).toBe('tested');
  });

  it('looks in $AGENT_HOME when the installation has only an empty folder of that name', async () => {
    const name = await writePlugin('home', { 'index.mjs': pluginSource() });
    await mkdir(join(installationDir, 'plugins', 'cron_providers', name), { recursive: true });

    expect((await choose(name)).name).toBe('tested');
    expect(warnings()).toEqual([]);
  });

  describe('falls back to the built-in ticker with one warning naming the reason', () => {
    async function expectFallback(name: string, reason: RegExp): Promise<void> {
      const provider = await choose(name);
      expect(provider).toBe(builtIn);
      expect(builtIn.running).toBe(true);
      expect(warnings()).toHaveLength(1);
      expect(warnings()[0]).toContain(`cron.provider "${name}" cannot be used`);
      expect(warnings()[0]).toMatch(reason);
      expect(warnings()[0]).toContain('the built-in ticker fires jobs instead');
    }

    it('when no plugin directory exists', async () => {
      await expectFallback('nowhere', /no plugin directory was found/);
    });

    it('when the directory has no entry point', async () => {
      const name = await writePlugin('home', { 'README.md': 'nothing here' });
      await expectFallback(name, /has no entry point/);
    });

    it('when package.json names an entry point that does not exist', async () => {
      const name = await writePlugin('home', { 'package.json': JSON.stringify({ main: 'missing.js' }) });
      await expectFallback(name, /has no entry point/);
    });

    it('when the module fails to load', async () => {
      const name = await writePlugin('home', { 'index.mjs': 'throw new Error("broken at load");' });
      await expectFallback(name, /index.mjs could not be loaded \(broken at load\)/);
    });

    it('when the module does not export createSchedulerProvider', async () => {
      const name = await writePlugin('home', { 'index.mjs': 'export const nothing = 1;' });
      await expectFallback(name, /does not export a function createSchedulerProvider/);
    });

    it('when createSchedulerProvider throws (the constructor)', async () => {
      const name = await writePlugin('home', { 'index.mjs': pluginSource({ create: 'throw new Error("bad constructor");' }) });
      await expectFallback(name, /createSchedulerProvider\(context\) threw \(bad constructor\)/);
    });

    it('when its start throws, and it is stopped', async () => {
      const name = await writePlugin('home', { 'index.mjs': pluginSource({ start: 'throw new Error("bad start");' }) });
      await expectFallback(name, /its start failed \(bad start\)/);
      expect(pluginCalls()).toEqual(['stop']);
    });

    it('when problem() is not null', async () => {
      const name = await writePlugin('home', { 'index.mjs': pluginSource({ problem: '"the portal is not configured"' }) });
      await expectFallback(name, /the portal is not configured/);
      expect(pluginCalls()).toEqual([]);
    });

    it('when the name is not a plain directory name', async () => {
      await expectFallback('../escape', /not a plugin name/);
    });

    it('for the shipped managed provider without AGENT_CRON_SCHEDULER_TOKEN', async () => {
      const repoRoot = join(process.cwd());
      const provider = await startSchedulerProvider({
        name: 'managed',
        places: { installationDir: repoRoot, agentHome },
        context: {
          ...context,
          settings: {
            portal_url: 'http://127.0.0.1:9',
            callback_url: 'http://127.0.0.1:9',
            expected_audience: 'agent',
            jwks_url: 'http://127.0.0.1:9/jwks',
          },
        },
        builtIn: () => builtIn,
      });
      expect(provider).toBe(builtIn);
      expect(warnings()).toEqual([expect.stringMatching(/cron.provider "managed" cannot be used: .*AGENT_CRON_SCHEDULER_TOKEN/)]);
    });
  });

  describe('a command that changes jobs', () => {
    it('gets no provider to tell when none is named', async () => {
      expect(await providerToNotify({ name: undefined, places: { installationDir, agentHome }, context })).toBeNull();
    });

    it('gets the named provider, not started', async () => {
      const name = await writePlugin('home', { 'index.mjs': pluginSource() });
      const provider = await providerToNotify({ name, places: { installationDir, agentHome }, context });
      await provider!.jobsChanged(['a', 'b']);
      expect(pluginCalls()).toEqual(['changed:a,b']);
    });

    it('gets null and one warning when the named provider cannot be used', async () => {
      expect(await providerToNotify({ name: 'nowhere', places: { installationDir, agentHome }, context })).toBeNull();
      expect(warnings()).toHaveLength(1);
    });
  });
});
