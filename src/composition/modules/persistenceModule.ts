import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileChannelDirectory } from '../../adapters/persistence/FileChannelDirectory.js';
import { FileJobRepository } from '../../adapters/persistence/FileJobRepository.js';
import { FileMemoryStore } from '../../adapters/persistence/FileMemoryStore.js';
import { FileRunOutputStore } from '../../adapters/persistence/FileRunOutputStore.js';
import { FileSkillLibrary } from '../../adapters/persistence/FileSkillLibrary.js';
import { FileTickLock } from '../../adapters/persistence/FileTickLock.js';

/** The embedded default: everything under `$AGENT_HOME`, nothing else running. */
export const filePersistenceModule = new ContainerModule(({ bind }) => {
  bind(TOKENS.JobRepository).to(FileJobRepository).inSingletonScope();
  bind(TOKENS.TickLock).to(FileTickLock).inSingletonScope();
  bind(TOKENS.RunOutputStore).to(FileRunOutputStore).inSingletonScope();
  bind(TOKENS.MemoryStore).to(FileMemoryStore).inSingletonScope();
  bind(TOKENS.SkillLibrary).to(FileSkillLibrary).inSingletonScope();
  bind(TOKENS.ChannelDirectoryStore).to(FileChannelDirectory).inSingletonScope();
});
