import type { ChatAddress } from '../../application/ports/PlatformSender.js';

/** Where a QQ Bot part goes, and the path of the API that sends there. */
export interface QqbotDestination {
  kind: 'group' | 'user' | 'channel';
  id: string;
  path: string;
}

/** An openid as QQ gives them in events (32 hexadecimal characters today); kept loose so a longer form still passes. */
const OPENID = /^[0-9A-Za-z_-]{1,128}$/;
/** A guild sub-channel id: an unsigned 64-bit number, as text. */
const CHANNEL_ID = /^\d{1,20}$/;

const FORMS = 'use qqbot:<group_openid> (or qqbot:group:<group_openid>), qqbot:user:<openid> or qqbot:channel:<channel_id>';

/**
 * The destination a target names: a bare id is a group's openid, the usual place a QQ bot
 * answers; `group:`, `user:` and `channel:` say which API explicitly. Anything else is a problem
 * sentence, never a guess.
 */
export function qqbotDestination(chatId: string): QqbotDestination | { problem: string } {
  const colon = chatId.indexOf(':');
  const prefix = colon < 0 ? 'group' : chatId.slice(0, colon);
  const id = colon < 0 ? chatId : chatId.slice(colon + 1);
  switch (prefix) {
    case 'group':
      if (OPENID.test(id)) return { kind: 'group', id, path: `/v2/groups/${id}/messages` };
      return { problem: `qqbot cannot address "${chatId}": a group_openid is letters and digits; ${FORMS}` };
    case 'user':
      if (OPENID.test(id)) return { kind: 'user', id, path: `/v2/users/${id}/messages` };
      return { problem: `qqbot cannot address "${chatId}": a user openid is letters and digits; ${FORMS}` };
    case 'channel':
      if (CHANNEL_ID.test(id)) return { kind: 'channel', id, path: `/channels/${id}/messages` };
      return { problem: `qqbot cannot address "${chatId}": a channel_id is a number; ${FORMS}` };
    default:
      return { problem: `qqbot cannot address "${chatId}": "${prefix}:" is not a QQ destination; ${FORMS}` };
  }
}

/** Checked before anything is sent: the destination's form, and no thread (QQ's send APIs have none). */
export function qqbotAddressProblem(address: ChatAddress): string | null {
  const destination = qqbotDestination(address.chatId);
  if ('problem' in destination) return destination.problem;
  if (address.threadId !== null) return `qqbot has no threads; deliver to "${address.chatId}" without thread "${address.threadId}"`;
  return null;
}
