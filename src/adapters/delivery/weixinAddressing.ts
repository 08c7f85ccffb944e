import type { ChatAddress } from '../../application/ports/PlatformSender.js';

/** An ordinary WeChat group; a QR-login iLink bot is a contact of its own and is not a member of any. */
const GROUP_CHAT = /@chatroom$/;

/**
 * Why the iLink bot API cannot take `address`, as one sentence; null when it can. A bot reaches
 * the WeChat users who chat with it, one at a time: there are neither groups nor threads to post
 * into. Kept apart from the sender so that the preflight does not load it.
 */
export function weixinAddressProblem(address: ChatAddress): string | null {
  if (address.threadId !== null) {
    return `weixin has no threads; deliver to "${address.chatId}" without thread "${address.threadId}".`;
  }
  if (GROUP_CHAT.test(address.chatId)) {
    return `weixin cannot post to the WeChat group "${address.chatId}": an iLink bot reaches only the users who chat with it (ids ending in @im.wechat).`;
  }
  return null;
}
