import type { ChatAddress, PlatformSender } from '../../application/ports/PlatformSender.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** What each platform's module exports; loaded only when a delivery or a listing needs it. */
export interface SenderModule {
  createSender(settings: PlatformSettings): PlatformSender;
}

export interface PlatformSpec {
  /** The settings without which nothing can be sent (decisions §10). */
  required: readonly string[];
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
};
