import { ContainerModule } from 'inversify';
import type { JobRepository } from '../../application/ports/JobRepository.js';
import type { ReplicaLeases } from '../../application/ports/ReplicaLeases.js';
import type { TickLock } from '../../application/ports/TickLock.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileChannelDirectory } from '../../adapters/persistence/FileChannelDirectory.js';
import { FileJobRepository } from '../../adapters/persistence/FileJobRepository.js';
import { FileMemoryStore } from '../../adapters/persistence/FileMemoryStore.js';
import { FileRunOutputStore } from '../../adapters/persistence/FileRunOutputStore.js';
import { FileSkillLibrary } from '../../adapters/persistence/FileSkillLibrary.js';
import { FileTickLock } from '../../adapters/persistence/FileTickLock.js';

/** Where jobs live when not in `$AGENT_HOME/cron/jobs.json`, and the tick lock that goes with that store. */
export interface JobStoreBinding {
  repository: JobRepository;
  tickLock: TickLock;
  /** The leases of the gateways sharing the store, when several can. */
  leases?: ReplicaLeases;
}

/** A database job store, as the gateway sees it: what it must prepare and how it hears of changes. */
export interface DatabaseJobStore extends JobStoreBinding {
  /** `host:port/database`, never the password. */
  label: string;
  /** Applies the schema migrations not applied yet; resolves with those it applied. */
  migrate(): Promise<Array<{ version: number; name: string }>>;
  /** Every schema migration this version knows, with when it was applied (null: pending). */
  migrations(): Promise<Array<{ version: number; name: string; appliedAt: Date | null }>>;
  /** Calls `onChange` when any process may have changed the jobs; returns the unwatch. */
  watch(onChange: () => void): () => void;
}

/**
 * Everything under `$AGENT_HOME`, nothing else running (the embedded default); with `jobs`,
 * the jobs live there instead (a database), the rest stays in files.
 */
export function persistenceModule(jobs?: JobStoreBinding): ContainerModule {
  return new ContainerModule(({ bind }) => {
    if (jobs) {
      bind(TOKENS.JobRepository).toConstantValue(jobs.repository);
      bind(TOKENS.TickLock).toConstantValue(jobs.tickLock);
      if (jobs.leases) bind(TOKENS.ReplicaLeases).toConstantValue(jobs.leases);
    } else {
      bind(TOKENS.JobRepository).to(FileJobRepository).inSingletonScope();
      bind(TOKENS.TickLock).to(FileTickLock).inSingletonScope();
    }
    bind(TOKENS.RunOutputStore).to(FileRunOutputStore).inSingletonScope();
    bind(TOKENS.MemoryStore).to(FileMemoryStore).inSingletonScope();
    bind(TOKENS.SkillLibrary).to(FileSkillLibrary).inSingletonScope();
    bind(TOKENS.ChannelDirectoryStore).to(FileChannelDirectory).inSingletonScope();
  });
}
