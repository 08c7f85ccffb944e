import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServerUnavailableError } from '../../../src/application/agent/ports/McpServers.js';
import { NO_SANDBOX } from '../../../src/application/ports/Sandbox.js';
import type { McpServerConfig } from '../../../src/adapters/config/AgentConfig.js';
import { SdkMcpServers } from '../../../src/adapters/mcp/SdkMcpServers.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import { eventually, isRunning } from '../../support/processLiveness.js';
import { registerPid, spawn } from '../../support/testProcesses.js';

const SERVER = fileURLToPath(new URL('../../support/mcpFilesServer.mjs', import.meta.url));

let home: string;
let shared: string;
let pools: SdkMcpServers[];

beforeEach(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'agent-mcp-')));
  shared = join(home, 'shared');
  mkdirSync(shared);
  mkdirSync(join(home, 'workspace'));
  writeFileSync(join(shared, 'notes.txt'), 'the launch is on Tuesday');
  pools = [];
});

afterEach(async () => {
  await Promise.all(pools.map((pool) => pool.close()));
  rmSync(home, { recursive: true, force: true });
});

function optionsFor(servers: Record<string, McpServerConfig>, environment: NodeJS.ProcessEnv = {}) {
  return {
    servers,
    environment,
    childEnvironment: { PATH: process.env.PATH },
    workspace: join(home, 'workspace'),
    sandbox: NO_SANDBOX,
    killer: new PosixProcessTreeKiller(),
    onStarted: registerPid,
  };
}

function poolOf(servers: Record<string, McpServerConfig>, environment: NodeJS.ProcessEnv = {}): SdkMcpServers {
  const pool = new SdkMcpServers(optionsFor(servers, environment));
  pools.push(pool);
  return pool;
}

const stdio = (extra: Partial<McpServerConfig> = {}): McpServerConfig => ({ command: process.execPath, args: [SERVER, shared], ...extra });
const signal = () => new AbortController().signal;

describe('SdkMcpServers over stdio', () => {
  it('starts a server on first use, lists its tools and calls one', async () => {
    const pool = poolOf({ files: stdio() });
    expect(pool.statuses()).toEqual([{ name: 'files', transport: 'stdio', state: 'stopped', problem: null }]);
    const tools = await pool.tools('files');
    expect(tools.map((tool) => tool.name)).toEqual(['read_file', 'list_files', 'show_env', 'pid', 'crash', 'hang']);
    expect(tools[0]).toMatchObject({ description: 'Read one file of the shared folder and return its text.' });
    expect(await pool.call('files', 'read_file', { path: 'notes.txt' }, signal())).toEqual({
      text: 'the launch is on Tuesday',
      isError: false,
    });
    expect(pool.statuses()[0]!.state).toBe('running');
  });

  it('offers only the tools that tools.include and tools.exclude let through', async () => {
    const pool = poolOf({ files: stdio({ tools: { include: ['*_file*', 'show_*'], exclude: ['list_*'] } }) });
    expect((await pool.tools('files')).map((tool) => tool.name)).toEqual(['read_file', 'show_env']);
  });

  it('gives the server the variables of env, ${NAME} taken from the service, and no other credential', async () => {
    const pool = poolOf(
      { files: stdio({ env: { FILES_TOKEN: '${SERVICE_TOKEN}', PLAIN: 'x' } }) },
      { SERVICE_TOKEN: 's3cret', OTHER_TOKEN: 'no' },
    );
    expect((await pool.call('files', 'show_env', { name: 'FILES_TOKEN' }, signal())).text).toBe('s3cret');
    expect((await pool.call('files', 'show_env', { name: 'OTHER_TOKEN' }, signal())).text).toBe('unset');
  });

  it('says which server did not start, and what it wrote, with McpServerUnavailableError', async () => {
    const pool = poolOf({ files: stdio({ env: { MCP_FAIL_START: 'the folder is gone' } }) });
    const failure = await pool.tools('files').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpServerUnavailableError);
    expect((failure as Error).message).toMatch(
      /^The MCP server "files" could not be started or did not list its tools: .*the folder is gone/,
    );
    expect(pool.statuses()[0]).toMatchObject({ state: 'failed' });
  });

  it('refuses a server that is not configured, naming the enabled ones', async () => {
    const pool = poolOf({ files: stdio(), off: { ...stdio(), enabled: false } });
    expect(pool.names()).toEqual(['files']);
    await expect(pool.tools('github')).rejects.toThrow('The MCP server "github" is not configured; the enabled ones are files.');
  });

  it('starts a server again after it crashed in the middle of a call', async () => {
    const pool = poolOf({ files: stdio() });
    const crashed = await pool.call('files', 'crash', {}, signal());
    expect(crashed.isError).toBe(true);
    expect(crashed.text).toMatch(/^the MCP server "files" stopped during the call .*; it starts again at the next call$/);
    expect(await pool.call('files', 'read_file', { path: 'notes.txt' }, signal())).toEqual({
      text: 'the launch is on Tuesday',
      isError: false,
    });
  });

  it('kills the server and what it started when a call outlives timeout_seconds, and starts it again', async () => {
    const pidFile = join(home, 'pids');
    const pool = poolOf({ files: stdio({ timeout_seconds: 1, env: { MCP_PID_FILE: pidFile } }) });
    const result = await pool.call('files', 'hang', {}, signal());
    expect(result).toEqual({
      text: 'the tool "hang" of the MCP server "files" did not answer within 1 s; the server was stopped and starts again at the next call',
      isError: true,
    });
    const pids = readFileSync(pidFile, 'utf8').split(' ').map(Number);
    pids.forEach(registerPid);
    expect(await eventually(() => pids.every((pid) => !isRunning(pid)))).toBe(true);
    expect((await pool.call('files', 'list_files', {}, signal())).text).toBe('notes.txt');
  });

  it('stops the least recently used idle server when a server beyond the maximum starts', async () => {
    const pool = new SdkMcpServers({ ...optionsFor({ files: stdio(), more: stdio() }), maxRunning: 1 });
    pools.push(pool);
    await pool.tools('files');
    await pool.tools('more');
    expect(pool.statuses().map((status) => [status.name, status.state])).toEqual([
      ['files', 'stopped'],
      ['more', 'running'],
    ]);
    expect((await pool.call('files', 'list_files', {}, signal())).text).toBe('notes.txt');
  });

  it('stops a server that has gone unused for the idle time', async () => {
    const pool = new SdkMcpServers({ ...optionsFor({ files: stdio() }), idleMs: 50 });
    pools.push(pool);
    await pool.call('files', 'list_files', {}, signal());
    expect(await eventually(() => pool.statuses()[0]!.state === 'stopped')).toBe(true);
  });

  it('stops every server at close', async () => {
    const pidFile = join(home, 'pids');
    const pool = poolOf({ files: stdio({ env: { MCP_PID_FILE: pidFile } }) });
    void pool.call('files', 'hang', {}, signal());
    expect(await eventually(() => readable(pidFile))).toBe(true);
    const pids = readFileSync(pidFile, 'utf8').split(' ').map(Number);
    pids.forEach(registerPid);
    await pool.close();
    expect(await eventually(() => pids.every((pid) => !isRunning(pid)))).toBe(true);
    expect(pool.statuses()[0]!.state).toBe('stopped');
  });
});

describe('SdkMcpServers over streamable HTTP', () => {
  async function httpServer(environment: NodeJS.ProcessEnv = {}): Promise<string> {
    const child = spawn(process.execPath, [SERVER, shared, '--http', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...environment },
    });
    const port = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        const match = /listening (\d+)/.exec(seen);
        if (match) resolve(match[1]!);
      });
      child.once('exit', () => reject(new Error(`the server exited: ${seen}`)));
    });
    return `http://127.0.0.1:${port}/mcp`;
  }

  it('lists and calls tools, sending headers whose ${NAME} comes from the service', async () => {
    const url = await httpServer({ MCP_REQUIRED_TOKEN: 'tok' });
    const pool = poolOf({ files: { url, headers: { Authorization: 'Bearer ${FILES_TOKEN}' } } }, { FILES_TOKEN: 'tok' });
    expect(pool.statuses()[0]!.transport).toBe('http');
    expect((await pool.tools('files')).map((tool) => tool.name)).toContain('read_file');
    expect(await pool.call('files', 'read_file', { path: 'notes.txt' }, signal())).toEqual({
      text: 'the launch is on Tuesday',
      isError: false,
    });
  });

  it('fails to start with a sentence when the server refuses the request', async () => {
    const url = await httpServer({ MCP_REQUIRED_TOKEN: 'tok' });
    const pool = poolOf({ files: { url } });
    await expect(pool.tools('files')).rejects.toThrow(/^The MCP server "files" could not be started or did not list its tools: /);
  });

  it('names a variable of headers that is not set', async () => {
    const pool = poolOf({ files: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${FILES_TOKEN}' } } });
    await expect(pool.tools('files')).rejects.toThrow(
      'mcp_servers.files.headers.Authorization names the variable FILES_TOKEN, which is not set',
    );
  });
});

function readable(path: string): boolean {
  try {
    return readFileSync(path, 'utf8').includes(' ');
  } catch {
    return false;
  }
}
