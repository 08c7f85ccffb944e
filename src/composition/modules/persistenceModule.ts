import type { ConversationStore } from '../../application/ports/ConversationStore.js';
import type { ChatReceiverLease, InboundCursorStore } from '../../application/ports/InboundChat.js';
import { ContainerModule, type ResolutionContext, type ServiceIdentifier } from 'inversify';
import type { JobRepository } from '../../application/ports/JobRepository.js';
import type { ReplicaLeases } from '../../application/ports/ReplicaLeases.js';
import type { TickLock } from '../../application/ports/TickLock.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileChannelDirectory } from '../../adapters/persistence/FileChannelDirectory.js';
import { FileJobRepository } from '../../adapters/persistence/FileJobRepository.js';
import { FileMemoryStore } from '../../adapters/persistence/FileMemoryStore.js';
import { FileRunLedger } from '../../adapters/persistence/FileRunLedger.js';
import { FileRunOutputStore } from '../../adapters/persistence/FileRunOutputStore.js';
import { FileSkillLibrary } from '../../adapters/persistence/FileSkillLibrary.js';
import { FileTickLock } from '../../adapters/persistence/FileTickLock.js';
import { FileUsedFireTokens } from '../../adapters/persistence/FileUsedFireTokens.js';

/**
 * A database holding what gateway replicas share (docs/scaling.md): the jobs and their tick lock,
 * the replicas' leases, and the other stores it keeps instead of files, each bound under its
 * token (an adapter built on first use from what the container resolves).
 */
export interface DatabaseStore {
  repository: JobRepository;
  tickLock: TickLock;
  leases: ReplicaLeases;
  /** `host:port/database`, never the password. */
  label: string;
  /** The chat state (conversations, pending messages, receivers' cursors), loaded when a gateway receives. */
  chatStore(): Promise<ConversationStore & InboundCursorStore>;
  /** The receiving role among the gateways on the database (one answers the chats). */
  chatReceiverLease(): Promise<ChatReceiverLease>;
  /** Applies the schema migrations not applied yet; resolves with those it applied. */
  migrate(): Promise<Array<{ version: number; name: string }>>;
  /** Every schema migration this version knows, with when it was applied (null: pending). */
  migrations(): Promise<Array<{ version: number; name: string; appliedAt: Date | null }>>;
  /** Calls `onChange` when any process may have changed the jobs; returns the unwatch. */
  watch(onChange: () => void): () => void;
  /**
   * Starts hearing of changes other processes make to what the gateway keeps in memory (the
   * webhook subscriptions), so that it may serve them without a query per request; returns the stop.
   */
  listenForChanges(): () => void;
  /** The adapters of the other ports it stores, by token. */
  stores: readonly DatabaseAdapter[];
}

/** The adapter a database store gives one port: built on first use, from what the container resolves. */
export interface DatabaseAdapter {
  token: ServiceIdentifier;
  build: (context: ResolutionContext) => unknown;
}

/** `build` as the adapter of `token`, checked against the port's type. */
export function databaseAdapter<T>(token: ServiceIdentifier<T>, build: (context: ResolutionContext) => T): DatabaseAdapter {
  return { token, build };
}

/**
 * Everything under `$AGENT_HOME`, nothing else running (the embedded default); with `database`,
 * what it stores lives there instead, the rest stays in files. Loaded before the modules that
 * bind the file adapters of those ports, which bind theirs only where nothing is bound yet.
 */
export function persistenceModule(database?: DatabaseStore): ContainerModule {
  return new ContainerModule(({ bind }) => {
    if (database) {
      bind(TOKENS.JobRepository).toConstantValue(database.repository);
      bind(TOKENS.TickLock).toConstantValue(database.tickLock);
      bind(TOKENS.ReplicaLeases).toConstantValue(database.leases);
      for (const store of database.stores) bind(store.token).toDynamicValue(store.build).inSingletonScope();
    } else {
      bind(TOKENS.JobRepository).to(FileJobRepository).inSingletonScope();
      bind(TOKENS.TickLock).to(FileTickLock).inSingletonScope();
    }
    if (!database?.stores.some((store) => store.token === TOKENS.RunOutputStore))
      bind(TOKENS.RunOutputStore).to(FileRunOutputStore).inSingletonScope();
    if (!database?.stores.some((store) => store.token === TOKENS.RunLedger)) bind(TOKENS.RunLedger).to(FileRunLedger).inSingletonScope();
    if (!database?.stores.some((store) => store.token === TOKENS.UsedFireTokens))
      bind(TOKENS.UsedFireTokens).to(FileUsedFireTokens).inSingletonScope();
    bind(TOKENS.MemoryStore).to(FileMemoryStore).inSingletonScope();
    bind(TOKENS.SkillLibrary).to(FileSkillLibrary).inSingletonScope();
    bind(TOKENS.ChannelDirectoryStore).to(FileChannelDirectory).inSingletonScope();
  });
}
