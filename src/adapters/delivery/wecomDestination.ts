import type { ChatAddress } from '../../application/ports/PlatformSender.js';
import type { PlatformSettings } from './PlatformSettings.js';

/**
 * Where a WeCom part goes: a group chat the app created (`appchat/send`), or members of the
 * app's visible range (`message/send`, as the app's own message to them).
 */
export type WecomDestination = { kind: 'chat'; chatId: string } | { kind: 'user'; userId: string };

export const WECOM_USER_PREFIX = 'user:';

/** `appchat/create`: at most 32 characters, digits and letters only. */
const CHAT_ID = /^[0-9A-Za-z]{1,32}$/;
/** A member's UserID: 1–64 of letters, digits and `_-@.`, starting with a letter or digit; `@all` is everyone the app may reach. */
const USER_ID = /^(?:@all|[0-9A-Za-z][\w.@-]{0,63})$/;

const FORMS = 'use wecom:<chatid> for a group chat the app created, or wecom:user:<UserID> (or wecom:user:@all) for the app\'s message to members';

/** The destination a target names, or why WeCom cannot address it (one sentence). */
export function wecomDestination(chatId: string): WecomDestination | { problem: string } {
  if (chatId.startsWith(WECOM_USER_PREFIX)) {
    const userId = chatId.slice(WECOM_USER_PREFIX.length);
    if (USER_ID.test(userId)) return { kind: 'user', userId };
    return { problem: `wecom cannot address "${chatId}": a UserID is 1 to 64 letters, digits or _-@. starting with a letter or digit, one member per target; ${FORMS}` };
  }
  if (CHAT_ID.test(chatId)) return { kind: 'chat', chatId };
  return { problem: `wecom cannot address "${chatId}": a group chat id is 1 to 32 letters and digits; ${FORMS}` };
}

/** Checked before anything is sent: the destination's form, no thread, and an agent_id WeCom can read. */
export function wecomAddressProblem(address: ChatAddress, settings: PlatformSettings): string | null {
  const destination = wecomDestination(address.chatId);
  if ('problem' in destination) return destination.problem;
  if (address.threadId !== null) return `wecom has no threads; deliver to "${address.chatId}" without thread "${address.threadId}"`;
  const agentId = settings.get('agent_id');
  if (destination.kind === 'user' && agentId !== undefined && !/^\d+$/.test(agentId)) {
    return `${settings.where('agent_id')} is "${agentId}"; it must be the app's AgentId, a number`;
  }
  return null;
}
