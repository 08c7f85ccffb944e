import type { McpServers, McpToolInfo } from '../../application/agent/ports/McpServers.js';
import type { Tool, ToolCallContext, ToolSpec } from '../../application/agent/ports/Tool.js';
import type { ToolCatalog } from '../../application/agent/ports/ToolCatalog.js';
import type { Logger } from '../../application/ports/Logger.js';
import { errorText } from '../../domain/errors.js';
import { MCP_TOOLSET_PREFIX, mcpServersNamed, mcpToolName, mcpToolsGranted } from '../../domain/mcp.js';
import { ownEntry } from '../../domain/ownEntry.js';

/** The preset that offers every enabled MCP server besides its own toolsets. */
const EVERY_SERVER_PRESET = 'agent-chat';

/** One tool of an MCP server, as the model sees it: `mcp__<server>__<tool>`, with the server's description and schema. */
export class McpTool implements Tool {
  readonly spec: ToolSpec;

  constructor(
    private readonly servers: McpServers,
    private readonly server: string,
    private readonly tool: McpToolInfo,
  ) {
    this.spec = {
      name: mcpToolName(server, tool.name),
      description: tool.description || `The tool "${tool.name}" of the MCP server "${server}".`,
      parameters: { type: 'object', ...tool.inputSchema },
    };
  }

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    const result = await this.servers.call(this.server, this.tool.name, args, context.signal);
    return result.isError ? `error: ${result.text}` : result.text;
  }
}

/**
 * The tools of another catalog, plus those of the MCP servers the toolsets grant (docs/mcp.md):
 * `mcp:<server>` all of a server's tools, `mcp:<server>:<tool>` one. A server a toolset names
 * that cannot be started or does not list its tools fails the run (McpServerUnavailableError,
 * a `blocked_config` run). `agent-chat` also offers every other enabled server; one of those that
 * fails is left out with a warning.
 */
export class McpToolCatalog implements ToolCatalog {
  constructor(
    private readonly inner: ToolCatalog,
    private readonly servers: McpServers,
    private readonly logger: Logger | null = null,
    /** The servers each default preset grants besides its own toolsets (`mcp_servers.<name>.presets`). */
    private readonly presetGrants: Readonly<Record<string, readonly string[]>> = {},
  ) {}

  async toolsFor(requested: readonly string[]): Promise<Tool[]> {
    const granted = requested.flatMap((name) =>
      (ownEntry(this.presetGrants, name) ?? []).map((server) => `${MCP_TOOLSET_PREFIX}${server}`),
    );
    const toolsets = [...requested, ...granted];
    const named = mcpServersNamed(toolsets);
    const implied = toolsets.includes(EVERY_SERVER_PRESET) ? this.servers.names().filter((server) => !named.includes(server)) : [];
    const tools = await this.inner.toolsFor(toolsets);
    for (const server of named) {
      const granted = mcpToolsGranted(toolsets, server);
      const listed = await this.servers.tools(server);
      for (const tool of listed) if (granted === null || granted.includes(tool.name)) tools.push(new McpTool(this.servers, server, tool));
    }
    for (const server of implied) {
      try {
        for (const tool of await this.servers.tools(server)) tools.push(new McpTool(this.servers, server, tool));
      } catch (error) {
        this.logger?.warn(`the session goes on without the MCP server "${server}": ${errorText(error)}`);
      }
    }
    return tools;
  }
}
