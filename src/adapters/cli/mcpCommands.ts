import type { Argv } from 'yargs';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { errorText } from '../../domain/errors.js';
import { mcpToolName, schemaTokens } from '../../domain/mcp.js';
import { jsonFlag, writeJson, writeLine, type CliIO } from './CliIO.js';
import { CliError } from './CliError.js';
import { MISSING_COMMAND } from './commandLevel.js';

/** One tool as a server lists it. */
export interface ListedMcpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What `agent mcp` needs: the servers of `mcp_servers` and a pool of this process to start them in. */
export interface McpApp {
  /** Every server of `mcp_servers`, the disabled ones too, in file order. */
  configured: Array<{ name: string; transport: 'stdio' | 'http'; enabled: boolean }>;
  servers: {
    /** The server's tools, starting it; throws one sentence when it does not start. */
    tools(server: string): Promise<ListedMcpTool[]>;
    /** Stops every server started. */
    close(): Promise<void>;
  };
}

/** One tool as the commands show it. */
interface ToolLine {
  /** The name the model sees. */
  name: string;
  /** The server's own name for it. */
  tool: string;
  description: string;
  /** About how many tokens its name, description and schema cost in every request that offers it. */
  schema_tokens: number;
}

interface ServerLine {
  name: string;
  transport: 'stdio' | 'http';
  enabled: boolean;
  /** `running` (it started and listed its tools), `failed`, or `disabled`. */
  state: 'running' | 'failed' | 'disabled';
  problem: string | null;
  tools: ToolLine[];
  schema_tokens: number;
}

function toolLines(server: string, tools: readonly ListedMcpTool[]): ToolLine[] {
  return tools.map((tool) => {
    const name = mcpToolName(server, tool.name);
    return {
      name,
      tool: tool.name,
      description: tool.description,
      schema_tokens: schemaTokens({ name, description: tool.description, parameters: tool.inputSchema }),
    };
  });
}

async function serverLine(app: McpApp, server: McpApp['configured'][number]): Promise<ServerLine> {
  const line: ServerLine = { ...server, state: 'disabled', problem: null, tools: [], schema_tokens: 0 };
  if (!server.enabled) return line;
  try {
    line.tools = toolLines(server.name, await app.servers.tools(server.name));
    line.state = 'running';
    line.schema_tokens = line.tools.reduce((sum, tool) => sum + tool.schema_tokens, 0);
  } catch (error) {
    line.state = 'failed';
    line.problem = errorText(error);
  }
  return line;
}

function writeServer(io: CliIO, line: ServerLine): void {
  const head = `${line.name} (${line.transport}): ${line.state}`;
  if (line.state !== 'running') {
    writeLine(io.stdout, line.problem ? `${head}: ${line.problem}` : head);
    return;
  }
  writeLine(io.stdout, `${head}, ${line.tools.length} tool(s), about ${line.schema_tokens} tokens of schemas`);
  const width = Math.max(0, ...line.tools.map((tool) => tool.name.length));
  for (const tool of line.tools) {
    writeLine(io.stdout, `  ${tool.name.padEnd(width)}  ${String(tool.schema_tokens).padStart(5)} tokens  ${firstLine(tool.description)}`);
  }
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** `agent mcp list|test`: the MCP servers of config.yaml (docs/mcp.md). */
export function registerMcpCommands(yargs: Argv, app: () => Promise<McpApp>, io: CliIO): Argv {
  const withServers = async <T>(use: (opened: McpApp) => Promise<T>): Promise<T> => {
    const opened = await app();
    try {
      return await use(opened);
    } finally {
      await opened.servers.close();
    }
  };
  return yargs.command('mcp', 'See the MCP servers of config.yaml (mcp_servers) and the tools they offer', (mcp) =>
    mcp
      .command(
        'list',
        'Start every enabled MCP server, show its state and its tools with the tokens their schemas cost, then stop them',
        (y) => y.option('json', jsonFlag('the servers and their tools')),
        (argv) =>
          withServers(async (opened) => {
            const lines: ServerLine[] = [];
            for (const server of opened.configured) lines.push(await serverLine(opened, server));
            if (argv.json) {
              writeJson(io.stdout, { servers: lines });
              return;
            }
            if (lines.length === 0) writeLine(io.stdout, 'No MCP server is configured; add one under mcp_servers in config.yaml.');
            for (const line of lines) writeServer(io, line);
          }),
      )
      .command(
        'test <server>',
        'Start one MCP server and list its tools, calling none; exit 1 with the reason when it does not start',
        (y) =>
          y
            .positional('server', { type: 'string', demandOption: true, describe: 'The name under mcp_servers' })
            .option('json', jsonFlag('the server and its tools')),
        (argv) =>
          withServers(async (opened) => {
            const name = String(argv.server);
            const server = opened.configured.find((entry) => entry.name === name);
            if (!server) {
              const known = opened.configured.map((entry) => entry.name);
              throw new CliError(
                ERROR_CODES.CLI.MCP_SERVER_UNAVAILABLE,
                `The MCP server "${name}" is not configured; ` +
                  (known.length > 0 ? `the configured ones are ${known.join(', ')}.` : 'add it under mcp_servers in config.yaml.'),
              );
            }
            if (!server.enabled) {
              throw new CliError(
                ERROR_CODES.CLI.MCP_SERVER_UNAVAILABLE,
                `The MCP server "${name}" is disabled (enabled: false under mcp_servers.${name}).`,
              );
            }
            const line = await serverLine(opened, server);
            if (!argv.json && line.state !== 'running')
              throw new CliError(ERROR_CODES.CLI.MCP_SERVER_UNAVAILABLE, line.problem ?? `The MCP server "${name}" did not start.`);
            if (argv.json) writeJson(io.stdout, line);
            else writeServer(io, line);
            if (line.state !== 'running') process.exitCode = 1;
          }),
      )
      .demandCommand(1, MISSING_COMMAND),
  );
}
