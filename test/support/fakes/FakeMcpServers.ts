import {
  McpServerUnavailableError,
  type McpCallResult,
  type McpServers,
  type McpServerStatus,
  type McpToolInfo,
} from '../../../src/application/agent/ports/McpServers.js';

/** MCP servers in memory: each server's tools, the servers that fail to start, and the calls made. */
export class FakeMcpServers implements McpServers {
  readonly calls: Array<{ server: string; tool: string; args: Record<string, unknown> }> = [];
  readonly started: string[] = [];
  closed = false;

  constructor(
    private readonly servers: Record<string, McpToolInfo[]>,
    private readonly failing: Record<string, string> = {},
  ) {}

  names(): string[] {
    return [...Object.keys(this.servers), ...Object.keys(this.failing)];
  }

  statuses(): McpServerStatus[] {
    return this.names().map((name) => ({
      name,
      transport: 'stdio',
      state: this.started.includes(name) ? 'running' : 'stopped',
      problem: null,
    }));
  }

  async tools(server: string): Promise<McpToolInfo[]> {
    const failure = this.failing[server];
    if (failure !== undefined) throw new McpServerUnavailableError(server, failure);
    const tools = this.servers[server];
    if (!tools) throw new McpServerUnavailableError(server, `The MCP server "${server}" is not configured.`);
    if (!this.started.includes(server)) this.started.push(server);
    return tools;
  }

  async call(server: string, tool: string, args: Record<string, unknown>): Promise<McpCallResult> {
    this.calls.push({ server, tool, args });
    return { text: `${server}/${tool} answered`, isError: false };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A tool as a server lists it. */
export function mcpTool(name: string, description = `${name} does its thing`): McpToolInfo {
  return { name, description, inputSchema: { type: 'object', properties: { path: { type: 'string' } } } };
}
