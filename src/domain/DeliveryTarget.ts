import { ERROR_CODES } from './errorCodes.js';
import { InvalidDeliveryError } from './errors.js';
import { ownEntry } from './ownEntry.js';

/** Where a run's answer goes. Platform destinations are resolved at fire time, not here. */
export type DeliveryTarget =
  | { kind: 'local' }
  | { kind: 'origin' }
  /** Every configured platform that has a home channel (bot-chat never). */
  | { kind: 'all' }
  | { kind: 'bot-chat'; profile: string | null }
  | PlatformTarget;

export interface PlatformTarget {
  kind: 'platform';
  platform: string;
  /** Null means the platform's home channel. */
  destination: string | null;
  threadId: string | null;
}

type Rule = (rest: string) => { destination: string; threadId: string | null } | null;

const E164 = /^\+[1-9]\d{6,14}$/;
const single =
  (pattern: RegExp): Rule =>
  (rest) =>
    pattern.test(rest) ? { destination: rest, threadId: null } : null;
const withThread =
  (chat: RegExp): Rule =>
  (rest) => {
    const [destination, threadId, extra] = rest.split(':');
    if (extra !== undefined || !destination || !chat.test(destination)) return null;
    if (threadId !== undefined && !/^[\w.-]+$/.test(threadId)) return null;
    return { destination, threadId: threadId ?? null };
  };
const either =
  (...rules: Rule[]): Rule =>
  (rest) => {
    for (const rule of rules) {
      const parsed = rule(rest);
      if (parsed) return parsed;
    }
    return null;
  };
const verbatim: Rule = (rest) => (rest.trim() ? { destination: rest, threadId: null } : null);

const CHANNEL_ID = /^[\w.-]+$/;
/** `#name`: a channel named in config's `channels` (or, where a platform lists them, the directory). */
const CHANNEL_NAME = /^#[\w.-]+$/;
const TEAM_CHAT = either(single(/^#[\w.-]+$/), withThread(CHANNEL_ID), single(/^[\w .-]+$/));

/** Platforms whose target syntax is validated: the forms each one takes. */
const VALIDATED = {
  telegram: either(single(/^@\w{3,}$/), withThread(/^-?\d+$/)),
  discord: TEAM_CHAT,
  slack: TEAM_CHAT,
  matrix: either(single(/^[!@][^:\s]+:[^\s]+$/), single(/^#[^\s]+$/)),
  feishu: withThread(/^[\w-]+$/),
  whatsapp: either(single(E164), single(/^[\w.-]+@[\w.-]+$/)),
  signal: either(single(E164), single(/^group:[\w+/=-]+$/)),
  sms: single(E164),
  email: single(/^[^\s@]+@[^\s@]+\.[^\s@]+$/),
  weixin: single(/^[\w@.-]+$/),
} satisfies Record<string, Rule>;

/**
 * Platforms whose thread part has a form of its own, checked here so that a job with a thread its
 * platform cannot find is refused when it is made rather than failing at every run.
 */
const THREAD_FORMS: Record<string, { pattern: RegExp; expected: string }> = {
  // Slack names a thread by its first message's `ts`: seconds, a dot, and a sequence number.
  slack: { pattern: /^\d+\.\d+$/, expected: "a Slack timestamp; use the ts of the thread's first message, such as 1712345678.123456" },
};

/** Platforms that take only `<platform>` or `<platform>:<chat_id>`, the id used verbatim. */
const VERBATIM_PLATFORMS = ['mattermost', 'homeassistant', 'dingtalk', 'wecom', 'bluebubbles', 'qqbot'] as const;
const VERBATIM: readonly string[] = VERBATIM_PLATFORMS;

/**
 * The chat platforms this version knows, by the name a target starts with. Each has a sender in
 * the catalogue of `src/adapters/delivery/platformCatalog.ts`, whose type asks for every one.
 */
export type KnownPlatform = keyof typeof VALIDATED | (typeof VERBATIM_PLATFORMS)[number];

export const KNOWN_PLATFORMS: readonly string[] = [...Object.keys(VALIDATED), ...VERBATIM];

function invalid(target: string, why: string): InvalidDeliveryError {
  return new InvalidDeliveryError(ERROR_CODES.DELIVERY.INVALID, `Delivery target "${target}" ${why}.`);
}

function parseOne(text: string): DeliveryTarget {
  const target = text.trim();
  if (target === 'local' || target === 'origin' || target === 'all') return { kind: target };
  if (target === 'bot-chat' || target.startsWith('bot-chat:')) {
    const profile = target.slice('bot-chat:'.length) || null;
    if (profile !== null && !/^[A-Za-z0-9][\w.-]*$/.test(profile)) {
      throw invalid(
        target,
        'names a profile with characters that are not allowed (use letters, digits, ".", "_" and "-", starting with a letter or digit)',
      );
    }
    return { kind: 'bot-chat', profile: target === 'bot-chat' ? null : profile };
  }
  const colon = target.indexOf(':');
  const platform = (colon < 0 ? target : target.slice(0, colon)).toLowerCase();
  const rest = colon < 0 ? null : target.slice(colon + 1);
  const rule = ownEntry<Rule>(VALIDATED, platform) ?? (VERBATIM.includes(platform) ? verbatim : undefined);
  if (!rule) {
    throw invalid(
      target,
      `names an unknown platform "${platform}"; use local, origin, all, bot-chat or one of: ${KNOWN_PLATFORMS.join(', ')}`,
    );
  }
  if (rest === null) return { kind: 'platform', platform, destination: null, threadId: null };
  // A `#name` is a named channel on every platform, resolved at fire time (config's `channels`).
  if (CHANNEL_NAME.test(rest)) return { kind: 'platform', platform, destination: rest, threadId: null };
  const parsed = VERBATIM.includes(platform) ? verbatim(rest) : rule(rest);
  if (!parsed) throw invalid(target, `is not a valid ${platform} destination`);
  const threadForm = ownEntry(THREAD_FORMS, platform);
  if (parsed.threadId !== null && threadForm !== undefined && !threadForm.pattern.test(parsed.threadId)) {
    throw invalid(target, `names the thread "${parsed.threadId}", which is not ${threadForm.expected}`);
  }
  return { kind: 'platform', platform, ...parsed };
}

/**
 * Parses a job's `deliver` value: one target or several separated by commas. Throws
 * DELIVERY.INVALID naming the first target that does not parse.
 */
export function parseDeliveryTargets(deliver: string): DeliveryTarget[] {
  const parts = deliver
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) return [{ kind: 'origin' }];
  return parts.map(parseOne);
}

export function describeTarget(target: DeliveryTarget): string {
  switch (target.kind) {
    case 'local':
    case 'origin':
    case 'all':
      return target.kind;
    case 'bot-chat':
      return target.profile ? `bot-chat:${target.profile}` : 'bot-chat';
    case 'platform':
      return [target.platform, target.destination, target.threadId].filter((part) => part !== null).join(':');
  }
}

/** What a raw channel id looks like on the platforms whose channels have names too. */
const RAW_CHANNEL_ID: Record<string, RegExp> = {
  slack: /^[CGDUW][A-Z0-9]{6,}$/,
  discord: /^\d{15,21}$/,
  mattermost: /^[a-z0-9]{26}$/,
  matrix: /^[!@][^:\s]+:\S+$/,
};

/**
 * The channel name a destination asks for, to be looked up in config's `channels` laid over the
 * channel directory, or null when the destination is plainly a raw id. `#name` must be found
 * (`required`), on every platform; on the platforms whose channels have names, a friendly name
 * without `#` is looked up too, and used as a raw id when neither knows it (raw ids always work).
 */
export function channelNameIn(platform: string, destination: string): { name: string; required: boolean } | null {
  const pattern = ownEntry(RAW_CHANNEL_ID, platform);
  // Elsewhere only config's `channels` names channels, and only a `#name` asks for one.
  if (pattern === undefined) return CHANNEL_NAME.test(destination) ? { name: destination.slice(1), required: true } : null;
  // A Matrix room alias (#room:server) is resolved by the homeserver itself.
  if (platform === 'matrix' && /^#[^:\s]+:\S+$/.test(destination)) return null;
  if (destination.startsWith('#')) return { name: destination.slice(1), required: true };
  return pattern.test(destination) ? null : { name: destination, required: false };
}

/** The platforms whose channels can be listed by name (the channel directory's sources). */
export const NAMED_CHANNEL_PLATFORMS: readonly string[] = Object.keys(RAW_CHANNEL_ID);
