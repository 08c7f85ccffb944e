import type { ChatAddress } from '../../application/ports/PlatformSender.js';

/** Home Assistant slugifies the names of the actions it registers: lowercase letters, digits, underscores. */
const SERVICE_NAME = /^[a-z0-9_]+$/;
/** `notify.send_message` is the action of notify entities: without an entity it notifies nobody. */
const ENTITY_ACTION = 'send_message';

/**
 * The notify action a homeassistant destination names (`mobile_app_pixel_7`, or written as
 * `notify.mobile_app_pixel_7`), or why Home Assistant's REST API cannot deliver to it (a clause
 * that follows "cannot be delivered: "). `persistent_notification` is an action of its own, built
 * into every installation, that shows the message in Home Assistant's notification panel.
 */
export function homeAssistantService(address: ChatAddress): { service: string } | { problem: string } {
  if (address.threadId !== null) return { problem: 'Home Assistant notifications have no threads; name the notify action alone' };
  const service = address.chatId.trim().replace(/^notify\./, '');
  if (service === ENTITY_ACTION) {
    return { problem: 'notify.send_message needs a notify entity and would notify nobody here; name a notify action such as mobile_app_<device> or persistent_notification' };
  }
  if (!SERVICE_NAME.test(service)) {
    return { problem: 'Home Assistant names a notify action in lowercase letters, digits and underscores, such as mobile_app_pixel_7 or persistent_notification' };
  }
  return { service };
}

/** The catalog's preflight: why Home Assistant cannot deliver to `address`, or null when it can. */
export function homeAssistantAddressProblem(address: ChatAddress): string | null {
  const named = homeAssistantService(address);
  return 'problem' in named ? named.problem : null;
}
