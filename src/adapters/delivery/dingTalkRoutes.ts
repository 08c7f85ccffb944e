/*
 * Which of DingTalk's two ways a part takes, decided from the settings alone so that the preflight
 * can refuse what neither reaches without loading the sender. A custom robot's `webhook_url`
 * posts to the one group the robot was added to; an app's `client_id` and `client_secret` reach
 * any group its robot is in, by open conversation id, through the open API.
 */
import type { ChatAddress } from '../../application/ports/PlatformSender.js';
import type { PlatformSettings } from './PlatformSettings.js';

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
