/** A job's own tools and earlier answers: its toolsets, the MCP servers they grant, the jobs it takes context from. */
import { ERROR_CODES } from './errorCodes.js';
import { InvalidJobError } from './errors.js';
import { mcpGrantOf } from './mcp.js';
import { isKnownToolset, toolsetProblem, unknownToolsetProblem } from './toolsets.js';

/**
 * A job's toolsets as stored: the names given, trimmed and without repeats, or null (the
 * `agent-cron` preset) for none or an empty list. A name this version does not know is refused
 * in one sentence listing the known ones (isKnownToolset: own entries only, so `constructor` is none).
 */
export function jobToolsets(names: readonly string[] | null | undefined): string[] | null {
  if (names === null || names === undefined) return null;
  const chosen = [...new Set(names.map((name) => name.trim()).filter((name) => name !== ''))];
  // An MCP grant's server is checked against the configuration by checkJobMcpGrants.
  const unknown = chosen.find((name) => !isKnownToolset(name) && mcpGrantOf(name) === null);
  if (unknown !== undefined) {
    throw new InvalidJobError(ERROR_CODES.JOB.UNKNOWN_TOOLSET, `The job ${unknownToolsetProblem(unknown)}.`);
  }
  return chosen.length > 0 ? chosen : null;
}

/**
 * Refuses toolsets that grant an MCP server (`mcp:<server>`, `mcp:<server>:<tool>`) which is not
 * among the enabled servers of `mcp_servers`, in one sentence naming the configured ones.
 */
export function checkJobMcpGrants(names: readonly string[] | null | undefined, mcpServers: readonly string[]): void {
  for (const name of names ?? []) {
    const problem = mcpGrantOf(name.trim()) ? toolsetProblem(name.trim(), mcpServers) : null;
    if (problem !== null) throw new InvalidJobError(ERROR_CODES.JOB.UNKNOWN_TOOLSET, `The job ${problem}.`);
  }
}

/**
 * The jobs a job takes context from, as stored: ids without repeats, never the job itself (its
 * own last answer is what `continue` carries).
 */
export function jobContextFrom(ids: readonly string[] | undefined, self: { id: string; name: string }): string[] {
  const chosen = [...new Set(ids ?? [])];
  if (chosen.includes(self.id)) {
    throw new InvalidJobError(
      ERROR_CODES.JOB.CONTEXT_FROM_ITSELF,
      `Job '${self.name}' cannot take context from itself; its own last answer is carried forward with --continue (the job tool's "continue": true).`,
    );
  }
  return chosen;
}
