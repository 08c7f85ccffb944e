import {
  globMatches,
  mcpGrantOf,
  mcpServersNamed,
  mcpToolIncluded,
  mcpToolName,
  mcpToolsGranted,
  schemaTokens,
  unknownMcpServerProblem,
} from '../../src/domain/mcp.js';
import { cronRunToolsets, toolsetProblem } from '../../src/domain/toolsets.js';

describe('MCP toolsets', () => {
  it('reads mcp:<server> and mcp:<server>:<tool>, and nothing else, as grants', () => {
    expect(mcpGrantOf('mcp:files')).toEqual({ server: 'files', tool: null });
    expect(mcpGrantOf('mcp:files:read_file')).toEqual({ server: 'files', tool: 'read_file' });
    for (const name of ['mcp:', 'mcp::x', 'mcp:files:', 'files', 'web', 'MCP:files']) expect(mcpGrantOf(name)).toBeNull();
  });

  it('lists the servers named, once each, and the tools granted of one', () => {
    const toolsets = ['web', 'mcp:files:read_file', 'mcp:github', 'mcp:files:list_files'];
    expect(mcpServersNamed(toolsets)).toEqual(['files', 'github']);
    expect(mcpToolsGranted(toolsets, 'files')).toEqual(['read_file', 'list_files']);
    expect(mcpToolsGranted(toolsets, 'github')).toBeNull();
    expect(mcpToolsGranted([...toolsets, 'mcp:files'], 'files')).toBeNull();
  });

  it('names a tool mcp__<server>__<tool>', () => {
    expect(mcpToolName('files', 'read_file')).toBe('mcp__files__read_file');
    expect(mcpToolName('files', 'read.file v2')).toBe('mcp__files__read_file_v2');
    expect(mcpToolName('files', 'x'.repeat(80))).toHaveLength(64);
  });

  it('matches globs on the whole name, with * and ? only', () => {
    expect(globMatches('read_*', 'read_file')).toBe(true);
    expect(globMatches('read_?ile', 'read_file')).toBe(true);
    expect(globMatches('read', 'read_file')).toBe(false);
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(globMatches('*', 'anything')).toBe(true);
  });

  it('offers a tool an include pattern matches and no exclude pattern does', () => {
    expect(mcpToolIncluded('read_file', {})).toBe(true);
    expect(mcpToolIncluded('read_file', { include: ['list_*'] })).toBe(false);
    expect(mcpToolIncluded('read_file', { include: ['*_file'], exclude: ['read_*'] })).toBe(false);
    expect(mcpToolIncluded('write_file', { exclude: ['delete_*'] })).toBe(true);
  });

  it('counts about four characters of the schema a token', () => {
    expect(schemaTokens({ name: 'x', description: '', parameters: {} })).toBe(
      Math.ceil(JSON.stringify({ name: 'x', description: '', parameters: {} }).length / 4),
    );
  });

  it('accepts mcp: toolsets of configured servers and refuses the others with the configured ones listed', () => {
    expect(toolsetProblem('mcp:files', ['files'])).toBeNull();
    expect(toolsetProblem('mcp:files:read_file', ['files'])).toBeNull();
    expect(toolsetProblem('web', [])).toBeNull();
    expect(toolsetProblem('mcp:github', ['files', 'db'])).toBe(
      'names the MCP server "github", which is not configured; the configured ones are files, db',
    );
    expect(toolsetProblem('mcp:github', [])).toBe(unknownMcpServerProblem('github', []));
    expect(toolsetProblem('mcp:github', [])).toMatch(/no MCP server is configured under mcp_servers$/);
    expect(toolsetProblem('shell', ['files'])).toMatch(/^names an unknown toolset "shell"; the known ones are /);
  });

  it('keeps mcp: toolsets through the recursion guard', () => {
    expect(cronRunToolsets(['web', 'mcp:files', 'cronjob'])).toEqual(['web', 'mcp:files']);
  });
});
