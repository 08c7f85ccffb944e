import { McpToolCatalog } from '../../../src/adapters/mcp/McpToolCatalog.js';
import { DefaultToolCatalog } from '../../../src/adapters/tools/DefaultToolCatalog.js';
import { McpServerUnavailableError } from '../../../src/application/agent/ports/McpServers.js';
import type { Tool, ToolSpec } from '../../../src/application/agent/ports/Tool.js';
import { cronRunToolsets } from '../../../src/domain/toolsets.js';
import { FakeMcpServers, mcpTool } from '../../support/fakes/FakeMcpServers.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

const builtIn = (name: string): Tool => ({
  spec: { name, description: name, parameters: { type: 'object', properties: {} } } satisfies ToolSpec,
  call: async () => `${name} ran`,
});

const BUILT_IN = new DefaultToolCatalog([builtIn('terminal'), builtIn('web_search'), builtIn('web_extract'), builtIn('clarify')]);

function catalogWith(servers: FakeMcpServers, logger: RecordingLogger | null = null): McpToolCatalog {
  return new McpToolCatalog(BUILT_IN, servers, logger);
}

const names = (tools: Tool[]) => tools.map((tool) => tool.spec.name);
const signal = new AbortController().signal;

describe('McpToolCatalog', () => {
  const servers = () => new FakeMcpServers({ files: [mcpTool('read_file'), mcpTool('list_files')], github: [mcpTool('create_issue')] });

  it("offers a job's toolsets naming mcp:files every tool of that server and none of the others", async () => {
    const pool = servers();
    const tools = await catalogWith(pool).toolsFor(cronRunToolsets(['terminal', 'mcp:files']));
    expect(names(tools)).toEqual(['terminal', 'mcp__files__read_file', 'mcp__files__list_files']);
    expect(pool.started).toEqual(['files']);
  });

  it('offers one tool for mcp:<server>:<tool>', async () => {
    expect(names(await catalogWith(servers()).toolsFor(['mcp:files:list_files']))).toEqual(['mcp__files__list_files']);
  });

  it('starts no server for toolsets that name none, the default cron toolsets included', async () => {
    const pool = servers();
    expect(names(await catalogWith(pool).toolsFor(cronRunToolsets()))).toEqual(['terminal', 'web_search', 'web_extract', 'clarify']);
    expect(pool.started).toEqual([]);
  });

  it('gives the model the server description and schema, and hands calls to the server', async () => {
    const pool = servers();
    const [tool] = await catalogWith(pool).toolsFor(['mcp:files:read_file']);
    expect(tool!.spec).toEqual({
      name: 'mcp__files__read_file',
      description: 'read_file does its thing',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
    });
    expect(await tool!.call({ path: 'a' }, { signal, unattended: true })).toBe('files/read_file answered');
    expect(pool.calls).toEqual([{ server: 'files', tool: 'read_file', args: { path: 'a' } }]);
  });

  it('fails with McpServerUnavailableError when a named server does not start', async () => {
    const pool = new FakeMcpServers({ files: [mcpTool('read_file')] }, { broken: 'The MCP server "broken" could not be started.' });
    await expect(catalogWith(pool).toolsFor(['web', 'mcp:broken'])).rejects.toBeInstanceOf(McpServerUnavailableError);
    expect(names(await catalogWith(pool).toolsFor(['web', 'mcp:files']))).toEqual(['web_search', 'web_extract', 'mcp__files__read_file']);
  });

  it('offers every enabled server with agent-chat, leaving out with a warning one that does not start', async () => {
    const logger = new RecordingLogger();
    const pool = new FakeMcpServers({ files: [mcpTool('read_file')] }, { broken: 'The MCP server "broken" could not be started.' });
    expect(names(await catalogWith(pool, logger).toolsFor(['agent-chat']))).toContain('mcp__files__read_file');
    expect(logger.entries).toEqual([
      {
        level: 'warn',
        message: 'the session goes on without the MCP server "broken": The MCP server "broken" could not be started.',
        fields: undefined,
      },
    ]);
  });
});
