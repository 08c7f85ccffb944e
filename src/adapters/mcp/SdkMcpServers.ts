import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  McpServerUnavailableError,
  type McpCallResult,
  type McpServers,
  type McpServerState,
  type McpServerStatus,
  type McpToolInfo,
} from '../../application/agent/ports/McpServers.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import type { Sandbox } from '../../application/ports/Sandbox.js';
import { mcpToolIncluded } from '../../domain/mcp.js';
import { errorText } from '../../domain/errors.js';
import type { McpServerConfig } from '../config/AgentConfig.js';

/** The SDK's modules, loaded when the first server starts: they are large, and most runs use no server. */
async function loadAll() {
  // One after the other: they share modules, which Jest's module loader cannot link twice at once.
  const client = await import('@modelcontextprotocol/sdk/client/index.js');
  const http = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const types = await import('@modelcontextprotocol/sdk/types.js');
  const stdio = await import('./SandboxedStdioTransport.js');
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    SandboxedStdioTransport: stdio.SandboxedStdioTransport,
  };
}
type Sdk = Awaited<ReturnType<typeof loadAll>>;
let sdkLoading: Promise<Sdk> | null = null;
function loadSdk(): Promise<Sdk> {
  sdkLoading ??= loadAll();
  sdkLoading.catch(() => (sdkLoading = null));
  return sdkLoading;
}

/** How long a server may go unused before it is stopped. */
export const MCP_IDLE_MS = 10 * 60_000;
/** How many servers run at once before the least recently used idle one is stopped for a new one. */
export const MCP_MAX_RUNNING = 8;
/** Seconds one tool call may take when the server's `timeout_seconds` says nothing. */
export const MCP_DEFAULT_TIMEOUT_SECONDS = 60;
/** How long starting a server and listing its tools may take. */
const START_TIMEOUT_MS = 30_000;

export interface SdkMcpServersOptions {
  /** `mcp_servers` of config.yaml, the disabled ones included. */
  servers: Readonly<Record<string, McpServerConfig>>;
  /** The service's environment, where `${NAME}` in `env` and `headers` is looked up. */
  environment: NodeJS.ProcessEnv;
  /** The environment stdio servers start from: without the service's credentials. */
  childEnvironment: NodeJS.ProcessEnv;
  /** `$AGENT_HOME/workspace`: where stdio servers start by default, and what the sandbox lets them write. */
  workspace: string;
  sandbox: Sandbox;
  killer: ProcessTreeKiller;
  logger?: Logger | null;
  /** The client's version, as the server is told. */
  version?: string;
  idleMs?: number;
  maxRunning?: number;
  /** Told the pid of every stdio server started (for tests that account for every process). */
  onStarted?: (pid: number) => void;
}

interface Connection {
  client: Client;
  transport: Transport;
  tools: McpToolInfo[];
  lastUsed: number;
  calls: number;
  idleTimer?: NodeJS.Timeout;
}

interface Entry {
  name: string;
  config: McpServerConfig;
  state: McpServerState;
  problem: string | null;
  connection: Promise<Connection> | null;
  /** The connection once started, until it ends. */
  current: Connection | null;
}

/**
 * The MCP servers of `mcp_servers` through the official SDK's client (docs/mcp.md): stdio servers
 * started in the sandbox (SandboxedStdioTransport), HTTP servers over streamable HTTP. A server
 * is started when a run first needs it and kept, stopped after MCP_IDLE_MS unused or when a
 * server beyond MCP_MAX_RUNNING needs its place, started again at the next use after it
 * crashed, and its tree killed when a call outlives its `timeout_seconds`.
 */
export class SdkMcpServers implements McpServers {
  private readonly entries = new Map<string, Entry>();
  private closing = false;

  constructor(private readonly options: SdkMcpServersOptions) {
    for (const [name, config] of Object.entries(options.servers)) {
      if (config.enabled === false) continue;
      this.entries.set(name, { name, config, state: 'stopped', problem: null, connection: null, current: null });
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  statuses(): McpServerStatus[] {
    return [...this.entries.values()].map((entry) => ({
      name: entry.name,
      transport: entry.config.url === undefined ? 'stdio' : 'http',
      state: entry.state,
      problem: entry.problem,
    }));
  }

  async tools(server: string): Promise<McpToolInfo[]> {
    return (await this.connected(server)).tools;
  }

  async call(server: string, tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    let connection: Connection;
    try {
      connection = await this.connected(server);
    } catch (error) {
      return { text: errorText(error), isError: true };
    }
    const entry = this.entries.get(server)!;
    const timeoutSeconds = entry.config.timeout_seconds ?? MCP_DEFAULT_TIMEOUT_SECONDS;
    connection.calls += 1;
    clearTimeout(connection.idleTimer);
    try {
      const result = await connection.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: timeoutSeconds * 1000,
        signal,
      });
      return { text: resultText(result), isError: result.isError === true };
    } catch (error) {
      const { McpError, ErrorCode } = await loadSdk();
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        this.options.logger?.warn(
          `the MCP server "${server}" did not answer a call of "${tool}" within ${timeoutSeconds} s; it is stopped`,
        );
        await this.stop(entry);
        return {
          text:
            `the tool "${tool}" of the MCP server "${server}" did not answer within ${timeoutSeconds} s; ` +
            'the server was stopped and starts again at the next call',
          isError: true,
        };
      }
      if (signal.aborted) throw error;
      if (entry.current !== connection) {
        return {
          text: `the MCP server "${server}" stopped during the call (${errorText(error)}); it starts again at the next call`,
          isError: true,
        };
      }
      return { text: `the MCP server "${server}" failed the call: ${errorText(error)}`, isError: true };
    } finally {
      connection.calls -= 1;
      this.touched(entry, connection);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.entries.values()].map((entry) => this.stop(entry)));
  }

  /** The running connection of `server`, started when there is none. */
  private connected(server: string): Promise<Connection> {
    const entry = this.entries.get(server);
    if (!entry) {
      const known = this.names();
      return Promise.reject(
        new McpServerUnavailableError(
          server,
          `The MCP server "${server}" is not configured` +
            (known.length > 0 ? `; the enabled ones are ${known.join(', ')}.` : '; add it under mcp_servers in config.yaml.'),
        ),
      );
    }
    if (this.closing) return Promise.reject(new McpServerUnavailableError(server, `The MCP server "${server}" is stopping.`));
    if (entry.connection === null) {
      const connecting = this.start(entry);
      entry.connection = connecting;
      connecting.catch(() => {
        if (entry.connection === connecting) entry.connection = null;
      });
    }
    return entry.connection.then((connection) => {
      connection.lastUsed = Date.now();
      return connection;
    });
  }

  private async start(entry: Entry): Promise<Connection> {
    entry.state = 'starting';
    await this.makeRoom(entry);
    const sdk = await loadSdk();
    let transport: Transport | null = null;
    const client = new sdk.Client({ name: 'agent', version: this.options.version ?? '0' });
    try {
      transport = this.transportFor(entry, sdk);
      const connection: Connection = { client, transport, tools: [], lastUsed: Date.now(), calls: 0 };
      transport.onclose = () => this.lost(entry, connection);
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
      const listed = await client.listTools(undefined, { timeout: START_TIMEOUT_MS });
      connection.tools = listed.tools
        .filter((tool) => mcpToolIncluded(tool.name, entry.config.tools ?? {}))
        .map((tool) => ({
          name: tool.name,
          description: tool.description ?? tool.title ?? '',
          inputSchema: tool.inputSchema as Record<string, unknown>,
        }));
      entry.state = 'running';
      entry.problem = null;
      entry.current = connection;
      this.touched(entry, connection);
      this.options.logger?.debug(`the MCP server "${entry.name}" started with ${connection.tools.length} tool(s)`);
      return connection;
    } catch (error) {
      const stderr = transport instanceof sdk.SandboxedStdioTransport ? transport.stderrTail() : '';
      await client.close().catch(() => undefined);
      await transport?.close().catch(() => undefined);
      const problem =
        `The MCP server "${entry.name}" could not be started or did not list its tools: ${startProblem(error, sdk)}` +
        (stderr ? ` (it wrote: ${lastLine(stderr)})` : '') +
        '; check mcp_servers.' +
        `${entry.name} in config.yaml or run "agent mcp test ${entry.name}".`;
      entry.state = 'failed';
      entry.problem = problem;
      throw new McpServerUnavailableError(entry.name, problem, { cause: error });
    }
  }

  private transportFor(entry: Entry, sdk: Sdk): Transport {
    const { config } = entry;
    const key = `mcp_servers.${entry.name}`;
    if (config.url !== undefined) {
      const headers = expandAll(config.headers ?? {}, this.options.environment, `${key}.headers`);
      return new sdk.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
    }
    const env = {
      ...this.options.childEnvironment,
      ...expandAll(config.env ?? {}, this.options.environment, `${key}.env`),
    };
    return new sdk.SandboxedStdioTransport(
      {
        command: config.command!,
        args: config.args ?? [],
        env,
        cwd: config.cwd ?? this.options.workspace,
        workspace: this.options.workspace,
        onStarted: this.options.onStarted,
      },
      this.options.sandbox,
      this.options.killer,
    );
  }

  /** Stops the least recently used idle server while MCP_MAX_RUNNING are running. */
  private async makeRoom(starting: Entry): Promise<void> {
    const max = this.options.maxRunning ?? MCP_MAX_RUNNING;
    const running = [...this.entries.values()].filter((entry) => entry !== starting && entry.state === 'running');
    if (running.length < max) return;
    const idle: Array<{ entry: Entry; lastUsed: number }> = [];
    for (const entry of running) {
      const connection = await entry.connection;
      if (connection && connection.calls === 0) idle.push({ entry, lastUsed: connection.lastUsed });
    }
    idle.sort((a, b) => a.lastUsed - b.lastUsed);
    const oldest = idle[0];
    if (oldest) {
      this.options.logger?.debug(`the MCP server "${oldest.entry.name}" is stopped to make room for "${starting.name}"`);
      await this.stop(oldest.entry);
    }
  }

  /** Arms the idle stop of a connection that is not in a call. */
  private touched(entry: Entry, connection: Connection): void {
    connection.lastUsed = Date.now();
    clearTimeout(connection.idleTimer);
    if (connection.calls > 0) return;
    connection.idleTimer = setTimeout(() => {
      if (connection.calls === 0) void this.stop(entry);
    }, this.options.idleMs ?? MCP_IDLE_MS);
    connection.idleTimer.unref();
  }

  private async stop(entry: Entry): Promise<void> {
    const connecting = entry.connection;
    entry.connection = null;
    entry.current = null;
    if (entry.state !== 'failed') entry.state = 'stopped';
    const connection = await connecting?.catch(() => null);
    if (!connection) return;
    clearTimeout(connection.idleTimer);
    await connection.transport.close().catch(() => undefined);
    await connection.client.close().catch(() => undefined);
  }

  /** The connection ended without being asked to (the server exited): the next use starts it again. */
  private lost(entry: Entry, connection: Connection): void {
    clearTimeout(connection.idleTimer);
    if (entry.current !== connection) return;
    entry.current = null;
    entry.connection = null;
    entry.state = 'stopped';
    if (!this.closing) this.options.logger?.warn(`the MCP server "${entry.name}" exited; it starts again when a run needs it`);
  }
}

/** `${NAME}` in each value replaced by the variable NAME; a variable that is not set is a problem naming the key. */
function expandAll(values: Readonly<Record<string, string>>, environment: NodeJS.ProcessEnv, key: string): Record<string, string> {
  const expanded: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    expanded[name] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => {
      const found = environment[variable];
      if (found === undefined) throw new Error(`${key}.${name} names the variable ${variable}, which is not set`);
      return found;
    });
  }
  return expanded;
}

function startProblem(error: unknown, { McpError, ErrorCode }: Sdk): string {
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return `no answer within ${START_TIMEOUT_MS / 1000} s`;
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return 'it exited';
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') return 'the program was not found';
  if (code === 'EACCES') return 'the program may not be executed';
  return errorText(error).replace(/\.$/, '');
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return (lines.at(-1) ?? '').slice(0, 300);
}

/** A tool result as the model reads it: its text parts, with the other parts named. */
function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const parts = content.map((part) => {
    if (part.type === 'text' && typeof part.text === 'string') return part.text;
    if (part.type === 'resource' && typeof (part.resource as { text?: unknown } | undefined)?.text === 'string') {
      return (part.resource as { text: string }).text;
    }
    if (part.type === 'resource_link') return `[resource ${String(part.uri)}]`;
    return `[${String(part.type)}${typeof part.mimeType === 'string' ? ` ${part.mimeType}` : ''}]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (parts.length === 0 && 'toolResult' in result) return JSON.stringify(result.toolResult);
  return parts.join('\n');
}
