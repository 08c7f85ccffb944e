import { ContainerModule } from 'inversify';
import { ListChannels } from '../../application/delivery/ListChannels.js';
import { ListPlatforms } from '../../application/delivery/ListPlatforms.js';
import { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import { SendMessage } from '../../application/delivery/SendMessage.js';

export const deliveryUseCaseModule = new ContainerModule(({ bind }) => {
  bind(SendMessage).toSelf().inSingletonScope();
  bind(ListPlatforms).toSelf().inSingletonScope();
  bind(ListChannels).toSelf().inSingletonScope();
  bind(RefreshChannelDirectory).toSelf().inSingletonScope();
});
