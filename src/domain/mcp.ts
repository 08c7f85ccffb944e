/**
 * MCP servers as toolsets (docs/mcp.md): the toolset `mcp:<server>` grants every tool of a
 * configured server, `mcp:<server>:<tool>` one of them, and the model sees each tool as
 * `mcp__<server>__<tool>`.
 */

/** What every MCP toolset name starts with. */
export const MCP_TOOLSET_PREFIX = 'mcp:';

/** What a server name may be: it becomes part of tool names, which providers restrict to `[A-Za-z0-9_-]`. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
export const MCP_SERVER_NAME_RULE = 'letters, digits, "_" and "-", starting with a letter or digit, at most 40 characters';

/** The grant a toolset name makes: a server's tools, all of them (`tool` null) or one. */
export interface McpGrant {
  server: string;
  tool: string | null;
}

/** The grant `name` makes when it is an MCP toolset (`mcp:<server>` or `mcp:<server>:<tool>`); null otherwise. */
export function mcpGrantOf(name: string): McpGrant | null {
  if (!name.startsWith(MCP_TOOLSET_PREFIX)) return null;
  const rest = name.slice(MCP_TOOLSET_PREFIX.length);
  const colon = rest.indexOf(':');
  const server = colon < 0 ? rest : rest.slice(0, colon);
  const tool = colon < 0 ? null : rest.slice(colon + 1);
  if (server === '' || tool === '') return null;
  return { server, tool };
}

/** Whether `name` has the form of an MCP toolset. */
export function isMcpToolset(name: string): boolean {
  return mcpGrantOf(name) !== null;
}

/** The servers the toolsets name, each once, in order of first mention. */
export function mcpServersNamed(toolsets: readonly string[]): string[] {
  return [...new Set(toolsets.flatMap((name) => mcpGrantOf(name)?.server ?? []))];
}

/**
 * The tools of `server` the toolsets grant: null for all of them, else the tool names (an
 * `mcp:<server>` anywhere in the list grants them all).
 */
export function mcpToolsGranted(toolsets: readonly string[], server: string): string[] | null {
  const named: string[] = [];
  for (const grant of toolsets.map(mcpGrantOf)) {
    if (grant?.server !== server) continue;
    if (grant.tool === null) return null;
    named.push(grant.tool);
  }
  return named;
}

/**
 * The name the model sees for `tool` of `server`. Providers take tool names of at most 64
 * characters from `[A-Za-z0-9_-]`: any other character of the server's tool name becomes `_`,
 * and a longer name is cut.
 */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}

/**
 * Whether `name` matches the glob `pattern`: `*` stands for any run of characters, `?` for one,
 * everything else for itself; the whole name must match.
 */
export function globMatches(pattern: string, name: string): boolean {
  const source = [...pattern]
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 's').test(name);
}

/**
 * Whether a server's tool `name` is offered under its `tools.include` and `tools.exclude`:
 * with an include list only the tools one of its patterns matches, and never one an exclude
 * pattern matches.
 */
export function mcpToolIncluded(name: string, filter: { include?: readonly string[]; exclude?: readonly string[] }): boolean {
  if (filter.include && !filter.include.some((pattern) => globMatches(pattern, name))) return false;
  return !(filter.exclude ?? []).some((pattern) => globMatches(pattern, name));
}

/**
 * The end of the sentence refusing a toolset list that names an MCP server the configuration
 * does not have (or has disabled): `names the MCP server "<name>", which is not configured; …`.
 */
export function unknownMcpServerProblem(server: string, configured: readonly string[]): string {
  const known =
    configured.length === 0 ? 'no MCP server is configured under mcp_servers' : `the configured ones are ${configured.join(', ')}`;
  return `names the MCP server ${JSON.stringify(server)}, which is not configured; ${known}`;
}

/** A rough token count of a tool's schema as a model gets it: about four characters a token. */
export function schemaTokens(spec: { name: string; description: string; parameters: unknown }): number {
  return Math.ceil(JSON.stringify(spec).length / 4);
}
