/**
 * The one wiring table of the stores (docs/architecture.md, How to add a store): for each store
 * port, its file adapter under `$AGENT_HOME` (the embedded default) and its PostgreSQL adapter,
 * when replicas share it. `storesModule` binds every port from it, the database's adapter where
 * one is configured and has one, the file's otherwise; no other module binds a store.
 */
import { ContainerModule, type Newable, type ResolutionContext, type ServiceIdentifier } from 'inversify';
import { TOKENS } from '../application/ports/tokens.js';
import { FileEventOutbox } from '../adapters/persistence/FileEventOutbox.js';
import { FileChannelDirectory } from '../adapters/persistence/FileChannelDirectory.js';
import { FileJobRepository } from '../adapters/persistence/FileJobRepository.js';
import { FileMemoryStore } from '../adapters/persistence/FileMemoryStore.js';
import { FileRunLedger } from '../adapters/persistence/FileRunLedger.js';
import { FileRunOutputStore } from '../adapters/persistence/FileRunOutputStore.js';
import { FileSkillLibrary } from '../adapters/persistence/FileSkillLibrary.js';
import { FileWorkingDirectories } from '../adapters/persistence/FileWorkingDirectories.js';
import { FileSubscriptionRepository } from '../adapters/persistence/FileSubscriptionRepository.js';
import { FileTickLock } from '../adapters/persistence/FileTickLock.js';
import { FileUsedFireTokens } from '../adapters/persistence/FileUsedFireTokens.js';
import { FileWebhookBacklog } from '../adapters/persistence/FileWebhookBacklog.js';
import { FileWebhookInbox } from '../adapters/persistence/FileWebhookInbox.js';
import { FileWebhookRunRecords } from '../adapters/persistence/FileWebhookRunRecords.js';
import { InMemoryWebhookRateLimiter } from '../adapters/webhook/InMemoryWebhookRateLimiter.js';
import type { DatabaseStore } from './databaseStore.js';

/**
 * Where one store port's adapters come from: `file`, the class bound on the embedded default
 * (null: the port has no file adapter, and is bound only with a database); `database`, the
 * adapter a configured database gives it (null: it stays in files even then).
 */
export interface StoreWiring {
  port: string;
  token: ServiceIdentifier;
  file: Newable<unknown> | null;
  database: ((store: DatabaseStore, context: ResolutionContext) => unknown) | null;
}

/** The adapter a database store keeps among its `stores`, by token. */
const kept =
  (token: ServiceIdentifier) =>
  (store: DatabaseStore, context: ResolutionContext): unknown => {
    const adapter = store.stores.find((each) => each.token === token);
    if (!adapter) throw new Error(`the database store has no adapter for ${String(token)}`);
    return adapter.build(context);
  };

/** Every store port, its file adapter and its PostgreSQL one (built in `applicationContainer.ts`'s database store). */
export const STORES: readonly StoreWiring[] = [
  { port: 'JobRepository', token: TOKENS.JobRepository, file: FileJobRepository, database: (store) => store.repository },
  { port: 'TickLock', token: TOKENS.TickLock, file: FileTickLock, database: (store) => store.tickLock },
  { port: 'ReplicaLeases', token: TOKENS.ReplicaLeases, file: null, database: (store) => store.leases },
  { port: 'RunLedger', token: TOKENS.RunLedger, file: FileRunLedger, database: kept(TOKENS.RunLedger) },
  { port: 'RunOutputStore', token: TOKENS.RunOutputStore, file: FileRunOutputStore, database: kept(TOKENS.RunOutputStore) },
  { port: 'EventOutbox', token: TOKENS.EventOutbox, file: FileEventOutbox, database: kept(TOKENS.EventOutbox) },
  { port: 'UsedFireTokens', token: TOKENS.UsedFireTokens, file: FileUsedFireTokens, database: kept(TOKENS.UsedFireTokens) },
  { port: 'WebhookInbox', token: TOKENS.WebhookInbox, file: FileWebhookInbox, database: kept(TOKENS.WebhookInbox) },
  { port: 'WebhookBacklog', token: TOKENS.WebhookBacklog, file: FileWebhookBacklog, database: kept(TOKENS.WebhookBacklog) },
  {
    port: 'WebhookRateLimiter',
    token: TOKENS.WebhookRateLimiter,
    file: InMemoryWebhookRateLimiter,
    database: kept(TOKENS.WebhookRateLimiter),
  },
  {
    port: 'WebhookSubscriptionRepository',
    token: TOKENS.WebhookSubscriptionRepository,
    file: FileSubscriptionRepository,
    database: kept(TOKENS.WebhookSubscriptionRepository),
  },
  { port: 'WebhookRunRecords', token: TOKENS.WebhookRunRecords, file: FileWebhookRunRecords, database: kept(TOKENS.WebhookRunRecords) },
  { port: 'MemoryStore', token: TOKENS.MemoryStore, file: FileMemoryStore, database: null },
  { port: 'SkillLibrary', token: TOKENS.SkillLibrary, file: FileSkillLibrary, database: null },
  // Folders on this machine whichever store keeps the jobs: a job's workdir is where its commands run.
  { port: 'WorkingDirectories', token: TOKENS.WorkingDirectories, file: FileWorkingDirectories, database: null },
  { port: 'ChannelDirectoryStore', token: TOKENS.ChannelDirectoryStore, file: FileChannelDirectory, database: null },
];

/**
 * Binds every store port of STORES: with `database`, the database's adapter where the port has
 * one, the file adapter otherwise. A caller that swaps one port's adapter (a test, an integrator)
 * rebinds its token on the container afterwards (`container.rebind`), the one way to do it.
 */
export function storesModule(database: DatabaseStore | null): ContainerModule {
  return new ContainerModule(({ bind }) => {
    for (const store of STORES) {
      const fromDatabase = database && store.database;
      if (fromDatabase)
        bind(store.token)
          .toDynamicValue((context) => fromDatabase(database, context))
          .inSingletonScope();
      else if (store.file) bind(store.token).to(store.file).inSingletonScope();
    }
  });
}
