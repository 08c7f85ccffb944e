import { ContainerModule } from 'inversify';
import { ListFailedEvents } from '../../application/events/ListFailedEvents.js';
import { ResendFailedEvents } from '../../application/events/ResendFailedEvents.js';
import { RunEvents } from '../../application/events/RunEvents.js';
import { SendOutboxEvents } from '../../application/events/SendOutboxEvents.js';
import { TestEventSubscription } from '../../application/events/TestEventSubscription.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { ConfiguredEventSubscriptions } from '../../adapters/config/eventsOutSettings.js';
import { HttpEventSender } from '../../adapters/events/HttpEventSender.js';

/**
 * Run events out (docs/events.md): the subscriptions of config.yaml, the signed HTTP sender, the
 * events the runs put in the outbox (a store: stores.ts), the gateway's sender and the commands.
 */
export const eventsModule = new ContainerModule(({ bind }) => {
  bind(TOKENS.EventSubscriptions)
    .toDynamicValue((context) => new ConfiguredEventSubscriptions(context.get(CONFIG_TOKENS.AgentConfig)))
    .inSingletonScope();
  bind(TOKENS.EventSender).toConstantValue(new HttpEventSender());
  bind(RunEvents).toSelf().inSingletonScope();
  bind(SendOutboxEvents).toSelf().inSingletonScope();
  bind(TestEventSubscription).toSelf().inSingletonScope();
  bind(ListFailedEvents).toSelf().inSingletonScope();
  bind(ResendFailedEvents).toSelf().inSingletonScope();
});
