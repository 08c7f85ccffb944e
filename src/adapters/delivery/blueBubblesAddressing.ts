import type { ChatAddress } from '../../application/ports/PlatformSender.js';

/** A chat guid: `<service>;-;<address>` for one person, `<service>;+;<chat id>` for a group. */
const CHAT_GUID = /^[A-Za-z]+;[-+];[^\s;]+$/;
const PHONE = /^\+?\d{3,15}$/;
const PHONE_FORMATTING = /[\s().-]/g;
const EMAIL = /^[^\s@;]+@[^\s@;]+\.[^\s@;]+$/;

/**
 * Why BlueBubbles cannot take `address`, as one sentence; null when it can. It takes a chat guid,
 * or a phone number or e-mail address that becomes a direct chat's guid; iMessage has no threads.
 * Kept apart from the sender so that the preflight does not load it.
 */
export function blueBubblesAddressProblem(address: ChatAddress): string | null {
  if (address.threadId !== null) {
    return `bluebubbles has no threads; deliver to "${address.chatId}" without thread "${address.threadId}".`;
  }
  if (CHAT_GUID.test(address.chatId) || PHONE.test(address.chatId.replace(PHONE_FORMATTING, '')) || EMAIL.test(address.chatId)) return null;
  return `bluebubbles cannot address "${address.chatId}": use a chat guid (iMessage;-;+14155550123, iMessage;+;chat…), a phone number or an e-mail address.`;
}

/**
 * The chat guid BlueBubbles sends to: a guid as it is; a phone number (its spaces, dashes, dots
 * and brackets dropped) or an e-mail address as the guid of the direct iMessage chat with it,
 * which the server opens when there is none yet.
 */
export function chatGuidOf(destination: string): string {
  if (CHAT_GUID.test(destination)) return destination;
  const phone = destination.replace(PHONE_FORMATTING, '');
  return `iMessage;-;${PHONE.test(phone) ? phone : destination}`;
}
