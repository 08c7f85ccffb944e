import type { TimerApi } from '../../src/adapters/scheduling/GatewayCronTrigger.js';
import { BuiltInTickerProvider } from '../../src/adapters/scheduling/BuiltInTickerProvider.js';
import { FakeSchedulerProvider } from '../support/fakes/FakeSchedulerProvider.js';
import { FakePortal } from '../support/fakePortal.js';
// @ts-expect-error the shipped plugin is plain JavaScript without declarations
import { createSchedulerProvider } from '../../plugins/cron_providers/managed/index.mjs';
import type { SchedulerProvider } from '../../src/application/ports/SchedulerProvider.js';
import { describeSchedulerProviderContract, providerContext, settle } from './SchedulerProvider.contract.js';

/** Timers that go off only when the test says so. */
function manualTimers(): TimerApi & { runAll(): void } {
  const pending = new Set<{ callback: () => void }>();
  return {
    set: (callback) => {
      const handle = { callback };
      pending.add(handle);
      return handle;
    },
    clear: (handle) => void pending.delete(handle as { callback: () => void }),
    now: () => Date.now(),
    runAll: () => {
      const due = [...pending];
      pending.clear();
      for (const handle of due) handle.callback();
    },
  };
}

describeSchedulerProviderContract('the built-in ticker of the gateway', async () => {
  const { fire, context } = providerContext();
  const timers = manualTimers();
  const watchers = new Set<() => void>();
  const provider = new BuiltInTickerProvider({
    kind: 'continuous',
    timers,
    watchStore: (onChange) => {
      watchers.add(onChange);
      return () => void watchers.delete(onChange);
    },
  });
  return {
    provider,
    context,
    fire,
    prod: async () => {
      timers.runAll();
      for (const watcher of [...watchers]) watcher();
      fire.finishRun('a-job');
      await settle();
    },
    activity: () => fire.dueCalls + fire.slots.length,
  };
});

describeSchedulerProviderContract('the built-in ticker of a command (one look)', async () => {
  const { fire, context } = providerContext();
  return {
    provider: new BuiltInTickerProvider({ kind: 'once' }),
    context,
    fire,
    prod: async () => fire.finishRun('a-job'),
    activity: () => fire.dueCalls + fire.slots.length,
  };
});

describeSchedulerProviderContract('the built-in ticker of a chat session (every minute)', async () => {
  const { fire, context } = providerContext();
  return {
    provider: new BuiltInTickerProvider({
      kind: 'minute',
      onError: (error) => {
        throw error;
      },
    }),
    context,
    fire,
    prod: async () => fire.finishRun('a-job'),
    activity: () => fire.dueCalls + fire.slots.length,
  };
});

describeSchedulerProviderContract('the managed provider', async () => {
  const portal = await FakePortal.start();
  const { fire, context } = providerContext(
    {
      portal_url: `${portal.url}/`,
      callback_url: 'https://agent.example.com/',
      expected_audience: 'agent-test',
      jwks_url: `${portal.url}/jwks.json`,
    },
    { AGENT_CRON_SCHEDULER_TOKEN: portal.token },
  );
  const intervals = new Set<{ callback: () => void }>();
  const provider = createSchedulerProvider(context, {
    setInterval: (callback: () => void) => {
      const handle = { callback };
      intervals.add(handle);
      return handle;
    },
    clearInterval: (handle: { callback: () => void }) => void intervals.delete(handle),
  }) as SchedulerProvider;
  return {
    provider,
    context,
    fire,
    prod: async () => {
      for (const interval of [...intervals]) interval.callback();
      fire.finishRun('a-job');
      await settle();
    },
    activity: () => portal.calls.length + fire.dueCalls + fire.slots.length,
    cleanup: () => portal.close(),
  };
});

describeSchedulerProviderContract('FakeSchedulerProvider', async () => {
  const { fire, context } = providerContext();
  const provider = new FakeSchedulerProvider();
  return {
    provider,
    context,
    fire,
    prod: () => provider.tick(),
    activity: () => fire.dueCalls + fire.slots.length,
  };
});
