/**
 * The Discord Gateway as this agent speaks it: the intents it asks for, the close codes and what
 * each means, the payloads, what one connection and the session hold, and the REST call and the
 * WebSocket address it connects on. DiscordGatewayConnection speaks it.
 */
import type { Logger } from '../../application/ports/Logger.js';
import type { Timer } from '../../application/ports/Timer.js';
import type { WebSocket } from 'ws';
import type { InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import { apiRoot, type PlatformHttp } from '../delivery/platformHttp.js';
import type { PlatformSettings } from '../delivery/PlatformSettings.js';

export const PLATFORM = 'discord';

/** GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT (privileged: switched on in the Developer Portal). */
export const DISCORD_INTENTS = (1 << 9) | (1 << 12) | (1 << 15);

/**
 * How this source closes a connection it gives up on, and at stop(): any code but 1000 and 1001,
 * which would end the session, so that the next connection (or the next run) can resume it and
 * be sent what it missed.
 */
export const RESUMABLE_CLOSE = 4000;
/** Gateway close codes after which reconnecting cannot help: what to fix, in one sentence each. */
export const FATAL_CLOSES: Record<number, (settings: PlatformSettings) => string> = {
  4004: (settings) =>
    `Discord refused the bot token (gateway close code 4004, authentication failed); check ${settings.where('bot_token')}.`,
  4010: () =>
    'Discord refused the shard of the gateway connection (close code 4010, invalid shard); this agent connects as one shard, so update agent.',
  4011: () =>
    'Discord requires this bot to shard its gateway connection (close code 4011, sharding required) because it is in too many servers for one connection, which agent does not support.',
  4012: () => 'Discord no longer accepts gateway API version 10 (close code 4012, invalid API version); update agent.',
  4013: () => 'Discord refused the gateway intents agent asks for (close code 4013, invalid intents); update agent.',
  4014: () =>
    'Discord refused the Message Content intent (gateway close code 4014, disallowed intents); turn on "Message Content Intent" under Bot > Privileged Gateway Intents for this application in the Discord Developer Portal (https://discord.com/developers/applications); the gateway connects again by itself, at most a minute later.',
};
/** Close codes whose session cannot be resumed: reconnect and identify afresh. */
export const NEW_SESSION_CLOSES = new Set([4007, 4009]);
export const MAX_BACKOFF_MS = 60_000;
/** A resume address that cannot even be reached this often in a row is given up for a new session. */
export const RESUME_ATTEMPTS = 3;
/** How long stop() waits for Discord to answer the closing handshake before dropping the socket. */
export const CLOSE_WAIT_MS = 2_000;
// Discord asks every HTTP client to identify itself in this form.
const USER_AGENT = 'DiscordBot (agent, 0.1)';

export interface Session {
  id: string;
  resumeUrl: string;
  userId: string;
}

export interface GatewayPayload {
  op: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Discord's payloads are JSON off the wire; each field is checked where it is read
  d?: any;
  s?: number | null;
  t?: string | null;
}

/** What to do after a connection ended. */
export type Ending =
  | {
      kind: 'resume' | 'identify';
      /** The wait before the next attempt; the back-off when absent. */
      delayMs?: number;
      /** Why it ended, when that is an outage (a drop, a refusal to connect), for the log. */
      outage?: string;
      /** A resume address that could not be reached. */
      unreachableResume?: boolean;
    }
  | { kind: 'fatal'; sentence: string };

export interface Connection {
  socket: WebSocket;
  /** The gateway's origin, for the log. */
  address: string;
  mode: 'identify' | 'resume';
  /** Decided by a payload (Reconnect, Invalid Session) or a missed heartbeat ACK before the socket closed. */
  ending: Ending | null;
  acked: boolean;
  hello: boolean;
  /** Whether READY or RESUMED came on it. */
  ready: boolean;
  error: unknown;
  heartbeats: AbortController;
  /** Ends the wait for Hello once it came or the socket closed. */
  helloWait: AbortController;
  closed: Promise<void>;
}

/** One dispatch in arrival order, and the message in it for the bot, if any. */
export interface Dispatch {
  seq: number;
  session: string | null;
  message: InboundMessage | null;
  /** Written to the cursor store at once (READY: a new session to resume). */
  checkpoint: boolean;
}

/** `GET /gateway/bot` (https://discord.com/developers/docs/events/gateway#get-gateway-bot): the address to identify on. */
export async function gatewayAddress(http: PlatformHttp, settings: PlatformSettings): Promise<string | Ending> {
  let answer;
  try {
    answer = await http.call({ url: `${apiRoot(settings.require('base_url'))}/gateway/bot`, headers: discordHeaders(settings) });
  } catch (error) {
    return { kind: 'identify', outage: errorText(error) };
  }
  const body = (answer.json ?? {}) as {
    url?: unknown;
    message?: unknown;
    session_start_limit?: { remaining?: unknown; reset_after?: unknown };
  };
  if (answer.status === 401) {
    const said = typeof body.message === 'string' ? body.message : answer.text;
    return {
      kind: 'fatal',
      sentence: `Discord refused the bot token (HTTP 401: ${http.clean(said)}); check ${settings.where('bot_token')}.`,
    };
  }
  if (answer.status !== 200 || typeof body.url !== 'string' || body.url === '') {
    return {
      kind: 'identify',
      outage: `Discord answered GET /gateway/bot with HTTP ${answer.status} (${http.clean(answer.text) || 'empty answer'})`,
    };
  }
  const limit = body.session_start_limit;
  if (limit?.remaining === 0 && typeof limit.reset_after === 'number') {
    return {
      kind: 'identify',
      delayMs: limit.reset_after,
      outage: `Discord allows no more new gateway sessions for this bot for ${Math.ceil(limit.reset_after / 60_000)} min`,
    };
  }
  return body.url;
}

/** What every REST call carries: the bot token, and the user agent Discord asks for. */
export function discordHeaders(settings: PlatformSettings): Record<string, string> {
  return { authorization: `Bot ${settings.require('bot_token')}`, 'user-agent': USER_AGENT };
}

let ws: Promise<typeof import('ws')> | null = null;

/** The `ws` package, loaded on first use so that commands that never connect do not pay for it. */
export function loadWs(): Promise<typeof import('ws')> {
  return (ws ??= import('ws'));
}

/** The Gateway address with the API version and encoding: `wss://gateway.discord.gg/?v=10&encoding=json`. */
export function gatewayUrl(address: string): string {
  const url = new URL(address);
  url.searchParams.set('v', '10');
  url.searchParams.set('encoding', 'json');
  return url.toString();
}

export function describeSocketError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : errorText(error);
}

export const DISCORD_API_BASE = 'https://discord.com/api/v10';

/** What the connection is made with: DiscordGatewayOptions but the cursor store. */
export interface DiscordConnectionOptions {
  /** The bot token (`platforms.discord.bot_token`, DISCORD_BOT_TOKEN). */
  botToken: string;
  /** The REST API root, `https://discord.com/api/v10` by default (a fake's for tests). */
  baseUrl?: string;
  /** How long one REST call or the WebSocket handshake may take, in seconds; default 10. */
  timeoutSeconds?: number;
  logger: Logger;
  /** Heartbeats, reconnect back-off and retries wait on it. */
  timer: Timer;
  /** A number in [0, 1): the first heartbeat's jitter and the pause after an invalid session; Math.random by default. */
  random?: () => number;
}
