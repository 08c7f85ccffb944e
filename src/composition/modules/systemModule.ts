import { ContainerModule } from 'inversify';
import { TOKENS } from '../../application/ports/tokens.js';
import { MarkedOrphanProcesses } from '../../adapters/process/MarkedOrphanProcesses.js';
import { HostProcessIdentity } from '../../adapters/system/HostProcessIdentity.js';
import { RandomIdGenerator } from '../../adapters/system/RandomIdGenerator.js';
import { SystemClock } from '../../adapters/system/SystemClock.js';
import { SystemTimer } from '../../adapters/system/SystemTimer.js';

export const systemModule = new ContainerModule(({ bind }) => {
  bind(TOKENS.Clock).to(SystemClock).inSingletonScope();
  bind(TOKENS.IdGenerator).to(RandomIdGenerator).inSingletonScope();
  bind(TOKENS.Random).toConstantValue(Math.random);
  bind(TOKENS.ProcessIdentity).to(HostProcessIdentity).inSingletonScope();
  bind(TOKENS.OrphanProcesses).toConstantValue(new MarkedOrphanProcesses());
  bind(TOKENS.Timer).to(SystemTimer).inSingletonScope();
});
