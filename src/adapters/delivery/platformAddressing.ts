import type { ChatAddress } from '../../application/ports/PlatformSender.js';
import type { PlatformSettings } from './PlatformSettings.js';

/*
 * The destination rules of the platforms added with their own addressing, in one module: the
 * preflight (platformCatalog.ts) checks them without loading any sender, and one small module
 * loads faster than eight at the start of every command. Each sender uses its own section.
 */

// ---- WhatsApp ----

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
    return PHONE_DIGITS.test(digits)
      ? { to: digits }
      : { problem: 'the WhatsApp Cloud API needs a phone number in E.164 form (+, country code, number, no spaces)' };
  }
  const at = destination.lastIndexOf('@');
  const user = destination.slice(0, Math.max(at, 0));
  const server = at < 0 ? '' : destination.slice(at + 1).toLowerCase();
  if (server === 'g.us') {
    return {
      problem:
        'it is a WhatsApp Web group, and the WhatsApp Cloud API sends to people by phone number, not to the groups of a WhatsApp account',
    };
  }
  if (server === 'lid') {
    return {
      problem:
        "it is a WhatsApp linked-device id, which hides the phone number the WhatsApp Cloud API needs; use the person's +<E.164> number",
    };
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

// ---- Feishu / Lark ----

/*
 * What a Feishu / Lark destination is, read from the id alone, so that the preflight can refuse
 * one the API cannot address without loading the sender. Kept apart from FeishuSender for that.
 */

/** The public API root of each `domain`: Feishu in mainland China, Lark everywhere else. */
export const FEISHU_API_ROOTS: Readonly<Record<string, string>> = {
  feishu: 'https://open.feishu.cn',
  lark: 'https://open.larksuite.com',
};

/** The `receive_id_type` of each kind of id, told apart by the prefix Feishu gives it. */
const RECEIVE_ID_TYPES: ReadonlyArray<readonly [prefix: string, type: string]> = [
  ['oc_', 'chat_id'],
  ['ou_', 'open_id'],
  ['on_', 'union_id'],
];

/** The `receive_id_type` for a chat id (`oc_…`), an open id (`ou_…`) or a union id (`on_…`); null for anything else. */
export function receiveIdTypeOf(chatId: string): string | null {
  return RECEIVE_ID_TYPES.find(([prefix]) => chatId.startsWith(prefix))?.[1] ?? null;
}

/** The API root: `base_url` when set, else the public root of `domain`; null when `domain` names neither. */
export function feishuApiRootOf(settings: PlatformSettings): string | null {
  const baseUrl = settings.get('base_url');
  if (baseUrl !== undefined) return baseUrl;
  return FEISHU_API_ROOTS[(settings.get('domain') ?? 'feishu').toLowerCase()] ?? null;
}

/**
 * Why Feishu cannot take a message to `address`: a chat or person id of a kind it does not
 * know, a thread that is not a message id (`om_…`, replied to in its thread), or a `domain`
 * that names neither Feishu nor Lark.
 */
export function feishuAddressProblem(address: ChatAddress, settings: PlatformSettings): string | null {
  if (feishuApiRootOf(settings) === null) {
    return `${settings.where('domain')} is "${settings.get('domain')}"; use feishu (open.feishu.cn) or lark (open.larksuite.com)`;
  }
  if (receiveIdTypeOf(address.chatId) === null) {
    return `feishu addresses a group chat by its chat id (oc_…) and a person by open id (ou_…) or union id (on_…), not "${address.chatId}"`;
  }
  if (address.threadId !== null && !/^om_[\w-]+$/.test(address.threadId)) {
    // A thread id (omt_…) cannot be replied to; any message of the thread can, its root included.
    return `a feishu thread is named by the message id (om_…) of a message in it, not "${address.threadId}"`;
  }
  return null;
}

// ---- DingTalk ----

/*
 * Which of DingTalk's two ways a part takes, decided from the settings alone so that the preflight
 * can refuse what neither reaches without loading the sender. A custom robot's `webhook_url`
 * posts to the one group the robot was added to; an app's `client_id` and `client_secret` reach
 * any group its robot is in, by open conversation id, through the open API.
 */

/** The destination that names the webhook robot's own group where the app's credentials are set too. */
export const WEBHOOK_GROUP = 'webhook';

export function hasAppCredentials(settings: PlatformSettings): boolean {
  return settings.get('client_id') !== undefined && settings.get('client_secret') !== undefined;
}

/** A robot webhook's group is the home channel when `home_channel` does not name another. */
export function dingTalkDefaultHome(settings: PlatformSettings): string | null {
  return settings.get('webhook_url') !== undefined ? WEBHOOK_GROUP : null;
}

/**
 * Whether a part to `chatId` goes to the robot webhook: always when it is the only credential
 * (the preflight has already refused any destination but the home channel), else only for
 * `webhook`.
 */
export function goesToWebhook(chatId: string, settings: PlatformSettings): boolean {
  if (settings.get('webhook_url') === undefined) return false;
  return !hasAppCredentials(settings) || chatId === WEBHOOK_GROUP;
}

/** Why neither of the configured ways reaches `address`; null when one does. */
export function dingTalkAddressProblem(address: ChatAddress, settings: PlatformSettings): string | null {
  if (address.threadId !== null) return `dingtalk group messages have no threads; name the group alone`;
  if (hasAppCredentials(settings)) {
    if (address.chatId === WEBHOOK_GROUP && settings.get('webhook_url') === undefined) {
      return `"${WEBHOOK_GROUP}" is the group of a robot webhook, and ${settings.where('webhook_url')} is not set`;
    }
    return null;
  }
  const home = settings.get('home_channel') ?? WEBHOOK_GROUP;
  if (address.chatId === home) return null;
  return (
    `dingtalk has only a robot webhook, which posts to its own group (the home channel "${home}"); ` +
    `set ${settings.where('client_id')} and ${settings.where('client_secret')} to reach group "${address.chatId}"`
  );
}

// ---- Home Assistant ----

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
    return {
      problem:
        'notify.send_message needs a notify entity and would notify nobody here; name a notify action such as mobile_app_<device> or persistent_notification',
    };
  }
  if (!SERVICE_NAME.test(service)) {
    return {
      problem:
        'Home Assistant names a notify action in lowercase letters, digits and underscores, such as mobile_app_pixel_7 or persistent_notification',
    };
  }
  return { service };
}

/** The catalog's preflight: why Home Assistant cannot deliver to `address`, or null when it can. */
export function homeAssistantAddressProblem(address: ChatAddress): string | null {
  const named = homeAssistantService(address);
  return 'problem' in named ? named.problem : null;
}

// ---- WeChat (weixin) ----

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

// ---- iMessage (BlueBubbles) ----

/** A chat guid: `<service>;-;<address>` for one person, `<service>;+;<chat id>` for a group. */
const CHAT_GUID = /^[A-Za-z]+;[-+];[^\s;]+$/;
const BLUEBUBBLES_PHONE = /^\+?\d{3,15}$/;
const PHONE_FORMATTING = /[\s().-]/g;
const BLUEBUBBLES_EMAIL = /^[^\s@;]+@[^\s@;]+\.[^\s@;]+$/;

/**
 * Why BlueBubbles cannot take `address`, as one sentence; null when it can. It takes a chat guid,
 * or a phone number or e-mail address that becomes a direct chat's guid; iMessage has no threads.
 * Kept apart from the sender so that the preflight does not load it.
 */
export function blueBubblesAddressProblem(address: ChatAddress): string | null {
  if (address.threadId !== null) {
    return `bluebubbles has no threads; deliver to "${address.chatId}" without thread "${address.threadId}".`;
  }
  if (
    CHAT_GUID.test(address.chatId) ||
    BLUEBUBBLES_PHONE.test(address.chatId.replace(PHONE_FORMATTING, '')) ||
    BLUEBUBBLES_EMAIL.test(address.chatId)
  )
    return null;
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
  return `iMessage;-;${BLUEBUBBLES_PHONE.test(phone) ? phone : destination}`;
}

// ---- WeCom ----

/**
 * Where a WeCom part goes: a group chat the app created (`appchat/send`), or members of the
 * app's visible range (`message/send`, as the app's own message to them).
 */
export type WecomDestination = { kind: 'chat'; chatId: string } | { kind: 'user'; userId: string };

export const WECOM_USER_PREFIX = 'user:';

/** `appchat/create`: at most 32 characters, digits and letters only. */
const WECOM_CHAT_ID = /^[0-9A-Za-z]{1,32}$/;
/** A member's UserID: 1–64 of letters, digits and `_-@.`, starting with a letter or digit; `@all` is everyone the app may reach. */
const WECOM_USER_ID = /^(?:@all|[0-9A-Za-z][\w.@-]{0,63})$/;

const WECOM_FORMS =
  "use wecom:<chatid> for a group chat the app created, or wecom:user:<UserID> (or wecom:user:@all) for the app's message to members";

/** The destination a target names, or why WeCom cannot address it (one sentence). */
export function wecomDestination(chatId: string): WecomDestination | { problem: string } {
  if (chatId.startsWith(WECOM_USER_PREFIX)) {
    const userId = chatId.slice(WECOM_USER_PREFIX.length);
    if (WECOM_USER_ID.test(userId)) return { kind: 'user', userId };
    return {
      problem: `wecom cannot address "${chatId}": a UserID is 1 to 64 letters, digits or _-@. starting with a letter or digit, one member per target; ${WECOM_FORMS}`,
    };
  }
  if (WECOM_CHAT_ID.test(chatId)) return { kind: 'chat', chatId };
  return { problem: `wecom cannot address "${chatId}": a group chat id is 1 to 32 letters and digits; ${WECOM_FORMS}` };
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

// ---- QQ Bot ----

/** Where a QQ Bot part goes, and the path of the API that sends there. */
export interface QqbotDestination {
  kind: 'group' | 'user' | 'channel';
  id: string;
  path: string;
}

/** An openid as QQ gives them in events (32 hexadecimal characters today); kept loose so a longer form still passes. */
const QQBOT_OPENID = /^[0-9A-Za-z_-]{1,128}$/;
/** A guild sub-channel id: an unsigned 64-bit number, as text. */
const QQBOT_CHANNEL_ID = /^\d{1,20}$/;

const QQBOT_FORMS = 'use qqbot:<group_openid> (or qqbot:group:<group_openid>), qqbot:user:<openid> or qqbot:channel:<channel_id>';

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
      if (QQBOT_OPENID.test(id)) return { kind: 'group', id, path: `/v2/groups/${id}/messages` };
      return { problem: `qqbot cannot address "${chatId}": a group_openid is letters and digits; ${QQBOT_FORMS}` };
    case 'user':
      if (QQBOT_OPENID.test(id)) return { kind: 'user', id, path: `/v2/users/${id}/messages` };
      return { problem: `qqbot cannot address "${chatId}": a user openid is letters and digits; ${QQBOT_FORMS}` };
    case 'channel':
      if (QQBOT_CHANNEL_ID.test(id)) return { kind: 'channel', id, path: `/channels/${id}/messages` };
      return { problem: `qqbot cannot address "${chatId}": a channel_id is a number; ${QQBOT_FORMS}` };
    default:
      return { problem: `qqbot cannot address "${chatId}": "${prefix}:" is not a QQ destination; ${QQBOT_FORMS}` };
  }
}

/** Checked before anything is sent: the destination's form, and no thread (QQ's send APIs have none). */
export function qqbotAddressProblem(address: ChatAddress): string | null {
  const destination = qqbotDestination(address.chatId);
  if ('problem' in destination) return destination.problem;
  if (address.threadId !== null) return `qqbot has no threads; deliver to "${address.chatId}" without thread "${address.threadId}"`;
  return null;
}
