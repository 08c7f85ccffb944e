import { AgentRunBlockedError } from '../../ports/AgentRunner.js';

/** One tool of an MCP server, as the server lists it. */
export interface McpToolInfo {
  /** The server's own name for it (the model sees `mcp__<server>__<name>`). */
  name: string;
  description: string;
  /** Its arguments as JSON Schema (`type: "object"`). */
  inputSchema: Record<string, unknown>;
}

/** Where a server stands in the pool. */
export type McpServerState = 'stopped' | 'starting' | 'running' | 'failed';

export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  /** Why it last failed to start or list its tools (one sentence), when it did. */
  problem: string | null;
}

/** What one tool call gave back: its text, and whether the server marked it as an error. */
export interface McpCallResult {
  text: string;
  isError: boolean;
}

/**
 * The MCP servers of `mcp_servers` (docs/mcp.md): a pool that starts a server the first time a
 * run needs it, keeps it for later runs, starts it again after it crashed, and stops it when it
 * has been idle a while or when the pool is closed.
 */
export interface McpServers {
  /** The enabled servers' names, in configuration order. */
  names(): string[];
  /** Every enabled server and its state; starts nothing. */
  statuses(): McpServerStatus[];
  /**
   * The server's tools after its `tools.include`/`tools.exclude`, starting it when it is not
   * running. Throws McpServerUnavailableError when it is not configured, cannot be started, or
   * does not list its tools.
   */
  tools(server: string, signal?: AbortSignal): Promise<McpToolInfo[]>;
  /**
   * Calls one tool. Never throws for what the server or its process does: a crash, the call's
   * timeout (the server's process tree is killed and it starts again at the next call) or an
   * error answer all come back as a result with `isError`.
   */
  call(server: string, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult>;
  /** Stops every server (their process trees for stdio servers); idempotent. */
  close(): Promise<void>;
}

/**
 * A run's toolsets name an MCP server that cannot serve it (it does not start, or does not list
 * its tools): the run is `blocked_config` with this sentence, and nothing else is spent.
 */
export class McpServerUnavailableError extends AgentRunBlockedError {
  constructor(
    readonly server: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
