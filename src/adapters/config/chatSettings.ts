import type { ChatAccess, ChatSettings } from '../../application/ports/ChatSettings.js';
import type { KnownPlatform } from '../../domain/DeliveryTarget.js';
import { ownEntry } from '../../domain/ownEntry.js';
import { toolsetProblem } from '../../domain/toolsets.js';
import { enabledMcpServers } from './mcpServerConfig.js';
import { environmentVariableFor } from '../../domain/platformSettingKeys.js';
import { platformSettings } from '../delivery/PlatformSettings.js';
import type { AgentConfig } from './AgentConfig.js';

/** What the gateway needs to know of a platform it receives from. */
export interface ReceiverNeeds {
  /** The settings its receiver needs, besides what its sender needs: the start-up check refuses `inbound: true` without them. */
  readonly credentials: readonly string[];
  /** Whether the platform pushes messages to the gateway's listener (any gateway takes them) rather than being asked for them (only the holder of the receiving role asks). */
  readonly pushed: boolean;
}

/**
 * The platforms the gateway can receive from (docs/chat-platforms.md), in the order messages name
 * them. `src/composition/gateway/inboundChat.ts` has a receiver for each: its type asks for one.
 */
export const RECEIVER_NEEDS = {
  telegram: { credentials: ['bot_token'], pushed: false },
  slack: { credentials: ['bot_token', 'signing_secret'], pushed: true },
  discord: { credentials: ['bot_token'], pushed: false },
} as const satisfies Partial<Record<KnownPlatform, ReceiverNeeds>>;

export type InboundPlatform = keyof typeof RECEIVER_NEEDS;

export const INBOUND_PLATFORMS = Object.keys(RECEIVER_NEEDS) as readonly InboundPlatform[];

export const DEFAULT_HISTORY_TURNS = 20;
export const DEFAULT_MAX_CONCURRENT_TURNS = 4;

/** A problem of the chat settings, which stops the gateway; `key` is where in config.yaml. */
export interface ChatSettingProblem {
  key: string;
  message: string;
}

/**
 * Who may talk to the bot where, read from `platforms.<name>.inbound|allowed_users|
 * allow_all_users|toolsets` (the environment's `<NAME>_INBOUND`, `<NAME>_ALLOWED_USERS`
 * (comma-separated) and `<NAME>_ALLOW_ALL_USERS` over them) and `chat.*`. `platforms` holds only
 * the platforms whose receiving is on and usable; `problems` says, one sentence each, what stops
 * the gateway: receiving on with nobody allowed (unless `allow_all_users` says so on purpose), on a
 * platform that cannot receive, a list that is not a list, or `toolsets` naming a toolset this
 * version does not know — on any platform, receiving or not, as for any other wrong value.
 */
export function chatSettingsFrom(config: AgentConfig, env: NodeJS.ProcessEnv): { settings: ChatSettings; problems: ChatSettingProblem[] } {
  const sections = config.platforms as Record<string, Record<string, unknown> | undefined>;
  const problems: ChatSettingProblem[] = toolsetProblems(sections, enabledMcpServers(config));
  const platforms: Record<string, ChatAccess> = {};
  for (const name of inboundPlatformsOn(config, env)) {
    const section = ownEntry(sections, name) ?? {};
    const key = `platforms.${name}`;
    if (!(INBOUND_PLATFORMS as readonly string[]).includes(name)) {
      problems.push({
        key: `${key}.inbound`,
        message: `${key}.inbound is on, but the gateway receives messages on ${INBOUND_PLATFORMS.join(', ')} only; remove it.`,
      });
      continue;
    }
    const allowAll = flag(section.allow_all_users, env[environmentVariableFor(name, 'allow_all_users')]);
    const allowed = userIds(section.allowed_users, env[environmentVariableFor(name, 'allowed_users')]);
    if (allowed === 'invalid') {
      problems.push({
        key: `${key}.allowed_users`,
        message: `${key}.allowed_users must be a list of ${name} user ids, e.g. ["123456789"].`,
      });
      continue;
    }
    if (allowed.length === 0 && !allowAll) {
      problems.push({
        key: `${key}.allowed_users`,
        message:
          `${key}.inbound is on but nobody may talk to the bot: list their ${name} user ids in ${key}.allowed_users ` +
          `(or ${environmentVariableFor(name, 'allowed_users')}, comma-separated), or set ${key}.allow_all_users: true to answer anyone.`,
      });
      continue;
    }
    const toolsets = section.toolsets;
    // Already reported by toolsetProblems.
    if (problems.some((problem) => problem.key === `${key}.toolsets`)) continue;
    const credentials = platformSettings(name, section, env, {});
    const missing = ownEntry<ReceiverNeeds>(RECEIVER_NEEDS, name)!.credentials.filter((setting) => credentials.get(setting) === undefined);
    if (missing.length > 0) {
      problems.push({
        key: `${key}.${missing[0]}`,
        message: `${key}.inbound is on but ${missing.map((setting) => credentials.where(setting)).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set.`,
      });
      continue;
    }
    if (name === 'slack' && config.platforms.webhook?.enabled !== true) {
      problems.push({
        key: `${key}.inbound`,
        message: `${key}.inbound needs the gateway's HTTP listener, where Slack posts events (POST /slack/events): set platforms.webhook.enabled: true.`,
      });
      continue;
    }
    platforms[name] = {
      allowedUsers: allowAll ? null : new Set(allowed),
      toolsets: toolsets === undefined ? null : (toolsets as string[]),
    };
  }
  return {
    settings: {
      historyTurns: config.chat?.history_turns ?? DEFAULT_HISTORY_TURNS,
      maxConcurrentTurns: config.chat?.max_concurrent_turns ?? DEFAULT_MAX_CONCURRENT_TURNS,
      platforms,
    },
    problems,
  };
}

/**
 * `platforms.<name>.toolsets` of every chat platform: a list of toolsets this version knows
 * (src/domain/toolsets.ts), one problem per platform, naming the known ones.
 */
function toolsetProblems(
  sections: Readonly<Record<string, Record<string, unknown> | undefined>>,
  mcpServers: readonly string[],
): ChatSettingProblem[] {
  const problems: ChatSettingProblem[] = [];
  for (const [name, section] of Object.entries(sections)) {
    if (name === 'webhook' || section === null || typeof section !== 'object' || Array.isArray(section)) continue;
    if (!Object.hasOwn(section, 'toolsets') || section.toolsets === undefined) continue;
    const key = `platforms.${name}.toolsets`;
    const toolsets: unknown = section.toolsets;
    if (!(Array.isArray(toolsets) && toolsets.every((item) => typeof item === 'string' && item.trim() !== ''))) {
      problems.push({ key, message: `${key} must be a list of toolset names, e.g. ["web", "clarify"].` });
      continue;
    }
    const wrong = (toolsets as string[]).map((toolset) => toolsetProblem(toolset, mcpServers)).find((found) => found !== null);
    if (wrong != null) problems.push({ key, message: `${key} ${wrong}.` });
  }
  return problems;
}

/** The platforms whose receiving is switched on, usable or not. */
export function inboundPlatformsOn(config: AgentConfig, env: NodeJS.ProcessEnv): string[] {
  const sections = config.platforms as Record<string, Record<string, unknown> | undefined>;
  return [...new Set([...Object.keys(sections), ...INBOUND_PLATFORMS])].filter(
    (name) => name !== 'webhook' && flag(ownEntry(sections, name)?.inbound, env[environmentVariableFor(name, 'inbound')]),
  );
}

function flag(fromConfig: unknown, fromEnv: string | undefined): boolean {
  if (fromEnv !== undefined && fromEnv.trim() !== '') return /^(1|true|yes|on)$/i.test(fromEnv.trim());
  return fromConfig === true;
}

function userIds(fromConfig: unknown, fromEnv: string | undefined): string[] | 'invalid' {
  if (fromEnv !== undefined && fromEnv.trim() !== '')
    return fromEnv
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== '');
  if (fromConfig === undefined || fromConfig === null) return [];
  if (!Array.isArray(fromConfig)) return 'invalid';
  const ids = fromConfig.map((id) => (typeof id === 'string' || typeof id === 'number' ? String(id).trim() : ''));
  return ids.some((id) => id === '') ? 'invalid' : ids;
}
