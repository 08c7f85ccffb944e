/*
 * What a Feishu / Lark destination is, read from the id alone, so that the preflight can refuse
 * one the API cannot address without loading the sender. Kept apart from FeishuSender for that.
 */
import type { ChatAddress } from '../../application/ports/PlatformSender.js';
import type { PlatformSettings } from './PlatformSettings.js';

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
