// A small MCP server for the tests, on the official SDK: `files`, whose tools read a directory.
//
//   node mcpFilesServer.mjs <directory>                 over stdio
//   node mcpFilesServer.mjs <directory> --http <port>   over streamable HTTP on 127.0.0.1 (0: any
//                                                       free port; prints `listening <port>`)
//
// Tools: read_file {path}, list_files {}, show_env {name} (the variable's value, or "unset"), pid {},
// crash {} (the server exits in the middle of the call), hang {} (starts a grandchild that
// sleeps, writes "<server pid> <grandchild pid>" to $MCP_PID_FILE, and never answers).
// With MCP_FAIL_START set, it exits at once with a line on stderr.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [directory = process.cwd(), mode, portText] = process.argv.slice(2);

if (process.env.MCP_FAIL_START) {
  process.stderr.write(`files: ${process.env.MCP_FAIL_START}\n`);
  process.exit(3);
}

const TOOLS = [
  {
    name: 'read_file',
    description: 'Read one file of the shared folder and return its text.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'The file name inside the folder.' } },
      required: ['path'],
    },
  },
  { name: 'list_files', description: 'List the files of the shared folder.', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'show_env',
    description: 'Say the value of one environment variable of the server.',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
  { name: 'pid', description: "Say the server's process id.", inputSchema: { type: 'object', properties: {} } },
  { name: 'crash', description: 'Exit in the middle of the call.', inputSchema: { type: 'object', properties: {} } },
  { name: 'hang', description: 'Start a sleeping grandchild and never answer.', inputSchema: { type: 'object', properties: {} } },
];

function newServer() {
  const server = new Server({ name: 'files', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    const text = (value) => ({ content: [{ type: 'text', text: value }] });
    switch (request.params.name) {
      case 'read_file':
        try {
          return text(readFileSync(join(directory, String(args.path)), 'utf8'));
        } catch (error) {
          return { ...text(`cannot read ${String(args.path)}: ${error.code ?? error.message}`), isError: true };
        }
      case 'list_files':
        return text(readdirSync(directory).sort().join('\n'));
      case 'show_env':
        return text(process.env[String(args.name)] ?? 'unset');
      case 'pid':
        return text(String(process.pid));
      case 'crash':
        process.exit(7);
        break;
      case 'hang': {
        const sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
        if (process.env.MCP_PID_FILE) writeFileSync(process.env.MCP_PID_FILE, `${process.pid} ${sleeper.pid}`);
        return new Promise(() => undefined);
      }
      default:
        return { ...text(`no tool ${request.params.name}`), isError: true };
    }
  });
  return server;
}

if (mode === '--http') {
  const http = createServer(async (req, res) => {
    // Stateless: a server and a transport per request.
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    if (process.env.MCP_REQUIRED_TOKEN && req.headers.authorization !== `Bearer ${process.env.MCP_REQUIRED_TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const server = newServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  http.listen(Number(portText ?? 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${http.address().port}\n`);
  });
} else {
  await newServer().connect(new StdioServerTransport());
}
