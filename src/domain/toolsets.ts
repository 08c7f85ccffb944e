import { ownEntry } from './ownEntry.js';
import { mcpGrantOf, unknownMcpServerProblem } from './mcp.js';

/**
 * Toolsets: named groups of tools a session may be given. A run's request carries toolset
 * names; the agent runtime expands them to tools with `toolsInToolsets`.
 */

/** The model-facing job tool; never offered inside a cron-run session. */
export const JOB_TOOLSET = 'cronjob';

/** The tools each plain toolset holds. */
export const TOOLSETS: Readonly<Record<string, readonly string[]>> = {
  cronjob: ['cronjob'],
  terminal: ['terminal'],
  web: ['web_search', 'web_extract'],
  web_search: ['web_search'],
  web_extract: ['web_extract'],
  clarify: ['clarify'],
  vision: ['vision'],
};

/** Presets that name several toolsets at once. */
export const TOOLSET_PRESETS: Readonly<Record<string, readonly string[]>> = {
  /** Scheduled runs: everything but the job tool. */
  'agent-cron': ['terminal', 'web', 'vision', 'clarify'],
  /** Interactive chat: everything, the job tool included. */
  'agent-chat': ['cronjob', 'terminal', 'web', 'vision', 'clarify'],
  /**
   * Webhook runs: deliberately constrained, no terminal, because payloads carry untrusted
   * content (docs/webhooks.md, Security notes).
   */
  'agent-webhook': ['web', 'vision', 'clarify'],
};

/** Toolsets a scheduled run gets by default. */
export const DEFAULT_CRON_TOOLSETS: readonly string[] = ['agent-cron'];

/** Every toolset and preset this version knows, plain toolsets first. */
export const KNOWN_TOOLSETS: readonly string[] = [...Object.keys(TOOLSETS), ...Object.keys(TOOLSET_PRESETS)];

/** Whether `name` is a toolset or preset this version knows (an own entry: `constructor` is none). */
export function isKnownToolset(name: string): boolean {
  return KNOWN_TOOLSETS.includes(name);
}

/**
 * What follows the key in the sentence refusing a list of toolsets that names `name`:
 * `names an unknown toolset "<name>"; the known ones are …`, every toolset and preset listed.
 */
export function unknownToolsetProblem(name: string): string {
  return `names an unknown toolset ${JSON.stringify(name)}; the known ones are ${KNOWN_TOOLSETS.join(', ')}`;
}

/** The distinct tool names the given toolsets and presets hold, in a stable order; unknown names are skipped. */
export function toolsInToolsets(names: readonly string[]): string[] {
  const tools = new Set<string>();
  const visit = (name: string, depth: number): void => {
    const preset = ownEntry(TOOLSET_PRESETS, name);
    if (preset && depth < 2) preset.forEach((member) => visit(member, depth + 1));
    for (const tool of ownEntry(TOOLSETS, name) ?? []) tools.add(tool);
  };
  names.forEach((name) => visit(name, 0));
  return [...tools];
}

/**
 * The recursion guard: whatever was asked for, a cron run cannot create or change jobs. Presets
 * are expanded so that a preset holding the job tool cannot smuggle it in.
 */
export function cronRunToolsets(requested: readonly string[] = DEFAULT_CRON_TOOLSETS): string[] {
  // A preset without the job tool stays named, so that what it grants besides (the MCP servers
  // of mcp_servers.<name>.presets) still reaches the catalog.
  const expanded = requested.flatMap((name) => {
    const preset = ownEntry(TOOLSET_PRESETS, name);
    return preset?.includes(JOB_TOOLSET) ? preset : [name];
  });
  return [...new Set(expanded)].filter((toolset) => toolset !== JOB_TOOLSET);
}

/**
 * What is wrong with the toolset `name` in a list, as the end of a sentence naming its key; null
 * when nothing is. `mcp:<server>` and `mcp:<server>:<tool>` are toolsets when `mcpServers`
 * (the enabled servers of `mcp_servers`) holds the server.
 */
export function toolsetProblem(name: string, mcpServers: readonly string[]): string | null {
  if (isKnownToolset(name)) return null;
  const grant = mcpGrantOf(name);
  if (grant) return mcpServers.includes(grant.server) ? null : unknownMcpServerProblem(grant.server, mcpServers);
  return unknownToolsetProblem(name);
}
