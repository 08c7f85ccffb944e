import { ContainerModule } from 'inversify';
import { AskAgent } from '../../application/chat/AskAgent.js';

export const chatUseCaseModule = new ContainerModule(({ bind }) => {
  bind(AskAgent).toSelf().inSingletonScope();
});
