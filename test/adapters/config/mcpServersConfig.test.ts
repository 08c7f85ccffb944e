import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { chatSettingsFrom } from '../../../src/adapters/config/chatSettings.js';
import { cronSettingsFrom } from '../../../src/adapters/config/cronSettings.js';
import { enabledMcpServers } from '../../../src/adapters/config/mcpServerConfig.js';
import { readConfiguredRoutes } from '../../../src/adapters/config/webhookRouteConfig.js';
import { YamlConfigLoader } from '../../../src/adapters/config/YamlConfigLoader.js';

let home: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'agent-mcp-config-'));
});

afterEach(() => rmSync(home, { recursive: true, force: true }));

function load(yaml: string) {
  const file = join(home, 'config.yaml');
  writeFileSync(file, yaml);
  return new YamlConfigLoader(file).load();
}

function problemOf(yaml: string): string {
  try {
    load(yaml);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the config to be refused');
}

describe('mcp_servers in config.yaml', () => {
  it('takes stdio and streamable HTTP servers with their settings', () => {
    const { config, warnings } = load(
      [
        'mcp_servers:',
        '  files:',
        '    command: files-mcp',
        '    args: [--root, /srv]',
        '    env: {TOKEN: "${FILES_TOKEN}"}',
        '    cwd: /srv',
        '    tools: {include: ["read_*"], exclude: [read_secret]}',
        '    timeout_seconds: 5',
        '  github:',
        '    url: https://mcp.example.com/mcp',
        '    headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}',
        '    enabled: false',
        '',
      ].join('\n'),
    );
    expect(warnings).toEqual([]);
    expect(config.mcp_servers).toEqual({
      files: {
        command: 'files-mcp',
        args: ['--root', '/srv'],
        env: { TOKEN: '${FILES_TOKEN}' },
        cwd: '/srv',
        tools: { include: ['read_*'], exclude: ['read_secret'] },
        timeout_seconds: 5,
      },
      github: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' }, enabled: false },
    });
    expect(enabledMcpServers(config)).toEqual(['files']);
    expect(cronSettingsFrom(config, {}).mcpServers).toEqual(['files']);
    expect(cronSettingsFrom(load('timezone: UTC\n').config, {})).not.toHaveProperty('mcpServers');
  });

  it('refuses a server with both command and url, or neither, in one sentence', () => {
    expect(problemOf('mcp_servers:\n  files:\n    command: x\n    url: http://127.0.0.1/mcp\n')).toMatch(
      /mcp_servers\.files must have either command \(a program spoken to over stdio\) or url \(a streamable HTTP endpoint\), not both or neither/,
    );
    expect(problemOf('mcp_servers:\n  files:\n    timeout_seconds: 3\n')).toMatch(/mcp_servers\.files must have either command/);
  });

  it('refuses a name that cannot be part of a tool name, a wrong timeout and a relative cwd', () => {
    expect(problemOf('mcp_servers:\n  "my files":\n    command: x\n')).toMatch(
      /mcp_servers has the key "my files", which is not a usable MCP server name: letters, digits/,
    );
    expect(problemOf('mcp_servers:\n  files:\n    command: x\n    timeout_seconds: 0\n')).toMatch(
      /mcp_servers\.files\.timeout_seconds must be a positive number of seconds/,
    );
    expect(problemOf('mcp_servers:\n  files:\n    command: x\n    cwd: srv\n')).toMatch(/mcp_servers\.files\.cwd must be an absolute path/);
  });

  it('lets routes and chat platforms name enabled servers as toolsets, and refuses the others', () => {
    const config = {
      platforms: { telegram: { toolsets: ['web', 'mcp:files'] }, slack: { toolsets: ['mcp:github'] } },
      mcp_servers: { files: { command: 'x' }, github: { url: 'http://127.0.0.1/mcp', enabled: false } },
      cron: {},
      gateway: {},
      providers: {},
      fallback_providers: [],
    } as unknown as AgentConfig;
    expect(chatSettingsFrom(config, {}).problems).toEqual([
      {
        key: 'platforms.slack.toolsets',
        message: 'platforms.slack.toolsets names the MCP server "github", which is not configured; the configured ones are files.',
      },
    ]);
    const routes = readConfiguredRoutes(
      { secret: 's', routes: { ok: { toolsets: ['mcp:files:read_file'] }, bad: { toolsets: ['mcp:github'] } } },
      true,
      'config.yaml',
      enabledMcpServers(config),
    );
    expect(routes.routes.map((route) => route.name)).toEqual(['ok']);
    expect(routes.problems).toEqual([
      'config.yaml: platforms.webhook.extra.routes.bad.toolsets names the MCP server "github", which is not configured; the configured ones are files.',
    ]);
  });
});
