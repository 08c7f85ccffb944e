import type { ConversationStore } from '../application/ports/ConversationStore.js';
import type { ChatReceiverLease, InboundCursorStore } from '../application/ports/InboundChat.js';
import type { ResolutionContext, ServiceIdentifier } from 'inversify';
import type { JobRepository } from '../application/ports/JobRepository.js';
import type { ReplicaLeases } from '../application/ports/ReplicaLeases.js';
import type { TickLock } from '../application/ports/TickLock.js';

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
