import type { ChatAddress } from '../../application/ports/PlatformSender.js';

/** What the Cloud API's `to` takes: a WhatsApp user's phone number, digits only, country code first. */
const PHONE_DIGITS = /^[1-9]\d{6,14}$/;
/** The servers of a WhatsApp Web jid whose user part is the person's phone number. */
const PHONE_SERVERS = new Set(['s.whatsapp.net', 'c.us']);

/**
 * The Cloud API recipient for a whatsapp destination, or why the Cloud API cannot reach it (a
 * clause that follows "cannot be delivered: "). A destination is `+<E.164>` or a jid as WhatsApp
 * Web clients write it (`<number>@s.whatsapp.net`, `<number>@c.us`). The Cloud API addresses a
 * person by phone number only, so a WhatsApp Web group (`@g.us`), a linked-device id (`@lid`)
 * that hides the number, a broadcast list or a channel cannot be reached through it.
 */
export function whatsAppRecipient(address: ChatAddress): { to: string } | { problem: string } {
  if (address.threadId !== null) return { problem: 'WhatsApp chats have no threads; name the chat without a thread' };
  const destination = address.chatId.trim();
  if (destination.startsWith('+')) {
    const digits = destination.slice(1);
    return PHONE_DIGITS.test(digits) ? { to: digits } : { problem: 'the WhatsApp Cloud API needs a phone number in E.164 form (+, country code, number, no spaces)' };
  }
  const at = destination.lastIndexOf('@');
  const user = destination.slice(0, Math.max(at, 0));
  const server = at < 0 ? '' : destination.slice(at + 1).toLowerCase();
  if (server === 'g.us') {
    return { problem: 'it is a WhatsApp Web group, and the WhatsApp Cloud API sends to people by phone number, not to the groups of a WhatsApp account' };
  }
  if (server === 'lid') {
    return { problem: "it is a WhatsApp linked-device id, which hides the phone number the WhatsApp Cloud API needs; use the person's +<E.164> number" };
  }
  if (!PHONE_SERVERS.has(server) || !PHONE_DIGITS.test(user)) {
    return { problem: 'the WhatsApp Cloud API reaches a person by phone number only: use +<E.164> or <number>@s.whatsapp.net' };
  }
  return { to: user };
}

/** The catalog's preflight: why the Cloud API cannot reach `address`, or null when it can. */
export function whatsAppAddressProblem(address: ChatAddress): string | null {
  const recipient = whatsAppRecipient(address);
  return 'problem' in recipient ? recipient.problem : null;
}
