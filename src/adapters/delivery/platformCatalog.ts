import type { ChatAddress, PlatformSender } from '../../application/ports/PlatformSender.js';
import type { KnownPlatform } from '../../domain/DeliveryTarget.js';
import {
  blueBubblesAddressProblem,
  dingTalkAddressProblem,
  dingTalkDefaultHome,
  feishuAddressProblem,
  homeAssistantAddressProblem,
  qqbotAddressProblem,
  wecomAddressProblem,
  weixinAddressProblem,
  whatsAppAddressProblem,
} from './platformAddressing.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** What each platform's module exports; loaded only when a delivery or a listing needs it. */
export interface SenderModule {
  createSender(settings: PlatformSettings): PlatformSender;
}

export interface PlatformSpec {
  /** The settings without which nothing can be sent. */
  required: readonly string[];
  /**
   * Where a platform takes one of several sets of credentials (dingtalk: an app's client id and
   * secret, or a robot webhook alone): it is configured only when every key of at least one set
   * has a value, on top of `required`. Absent: `required` decides alone.
   */
  alternatives?: ReadonlyArray<readonly string[]>;
  /** The home channel when `home_channel` is not set; null (or absent) for none. */
  defaultHomeChannel?(settings: PlatformSettings): string | null;
  /** Values used when neither config nor environment sets the key. */
  defaults: Readonly<Record<string, string>>;
  /** Whether its API lists channels for the channel directory. */
  listsChannels: boolean;
  load(): Promise<SenderModule>;
  /**
   * Why this platform's API cannot address `address` with these settings, as one sentence;
   * null (or absent) when it can. Checked before anything is sent, never by contacting anyone.
   */
  addressProblem?(address: ChatAddress, settings: PlatformSettings): string | null;
}

/**
 * The chat platforms this version delivers to, each with its own adapter over the platform's
 * official API. Every `load` is a dynamic import, so a command that delivers nowhere loads none.
 * The names are the domain's (`KNOWN_PLATFORMS`, the target syntax): the compiler asks for an
 * entry for each, and for none other. The order is the one `agent platforms` lists them in.
 */
export const PLATFORM_SPECS: Readonly<Record<string, PlatformSpec>> = {
  telegram: {
    required: ['bot_token'],
    defaults: { base_url: 'https://api.telegram.org' },
    listsChannels: false,
    load: () => import('./TelegramSender.js'),
  },
  discord: {
    required: ['bot_token'],
    defaults: { base_url: 'https://discord.com/api/v10' },
    listsChannels: true,
    load: () => import('./DiscordSender.js'),
  },
  slack: {
    required: ['bot_token'],
    defaults: { base_url: 'https://slack.com/api' },
    listsChannels: true,
    load: () => import('./SlackSender.js'),
  },
  mattermost: {
    required: ['url', 'token'],
    defaults: {},
    listsChannels: true,
    load: () => import('./MattermostSender.js'),
  },
  matrix: {
    required: ['homeserver', 'access_token'],
    defaults: {},
    listsChannels: true,
    load: () => import('./MatrixSender.js'),
  },
  email: {
    required: ['smtp_host', 'username', 'password', 'from'],
    defaults: { smtp_port: '587', secure: 'starttls' },
    listsChannels: false,
    load: () => import('./EmailSender.js'),
  },
  sms: {
    required: ['account_sid', 'auth_token', 'from'],
    defaults: { base_url: 'https://api.twilio.com' },
    listsChannels: false,
    load: () => import('./TwilioSmsSender.js'),
  },
  signal: {
    required: ['http_url', 'account'],
    defaults: {},
    listsChannels: false,
    load: () => import('./SignalSender.js'),
  },
  whatsapp: {
    required: ['phone_number_id', 'access_token'],
    // The Graph API version is part of the root; v26.0 was the newest when this was written.
    defaults: { base_url: 'https://graph.facebook.com/v26.0' },
    listsChannels: false,
    load: () => import('./WhatsAppSender.js'),
    addressProblem: whatsAppAddressProblem,
  },
  homeassistant: {
    required: ['url', 'token'],
    // Home Assistant answers once the notify action finished, and mobile_app's push alone may take
    // 10 s; giving up sooner would retry, and notify twice, a call that was about to succeed.
    defaults: { timeout_seconds: '30' },
    listsChannels: false,
    load: () => import('./HomeAssistantSender.js'),
    addressProblem: homeAssistantAddressProblem,
  },
  feishu: {
    required: ['app_id', 'app_secret'],
    // The API root follows `domain` (open.feishu.cn or open.larksuite.com) unless base_url is set.
    defaults: { domain: 'feishu' },
    listsChannels: false,
    load: () => import('./FeishuSender.js'),
    addressProblem: feishuAddressProblem,
  },
  dingtalk: {
    required: [],
    alternatives: [['client_id', 'client_secret'], ['webhook_url']],
    defaults: { base_url: 'https://api.dingtalk.com' },
    listsChannels: false,
    load: () => import('./DingTalkSender.js'),
    defaultHomeChannel: dingTalkDefaultHome,
    addressProblem: dingTalkAddressProblem,
  },
  wecom: {
    required: ['corp_id', 'secret', 'agent_id'],
    defaults: { base_url: 'https://qyapi.weixin.qq.com' },
    listsChannels: false,
    load: () => import('./WecomSender.js'),
    addressProblem: wecomAddressProblem,
  },
  qqbot: {
    required: ['app_id', 'client_secret'],
    defaults: { base_url: 'https://api.sgroup.qq.com', token_url: 'https://bots.qq.com/app/getAppAccessToken' },
    listsChannels: false,
    load: () => import('./QqBotSender.js'),
    addressProblem: qqbotAddressProblem,
  },
  weixin: {
    required: ['token'],
    // Tencent's iLink host; a QR login may name another (`baseurl`), which then goes in base_url.
    defaults: { base_url: 'https://ilinkai.weixin.qq.com' },
    listsChannels: false,
    load: () => import('./WeixinSender.js'),
    addressProblem: weixinAddressProblem,
  },
  bluebubbles: {
    required: ['url', 'password'],
    // The server answers a send only once Messages confirmed it, which it waits up to 2 minutes for.
    defaults: { timeout_seconds: '130' },
    listsChannels: false,
    load: () => import('./BlueBubblesSender.js'),
    addressProblem: blueBubblesAddressProblem,
  },
} satisfies Record<KnownPlatform, PlatformSpec>;
