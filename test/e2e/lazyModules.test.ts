import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AGENT_EXECUTABLE, makeAgentHome, outcomeOf, removeAgentHome, requireBuiltAgent, runAgent, storedJobs } from './agentCli.js';
import { spawn } from '../support/testProcesses.js';

/**
 * Modules the bundle loads lazily that the other end-to-end tests do not reach: the questions of
 * `agent cron create` on a terminal, and ps-tree, which lists processes only where /proc is
 * missing (macOS, the BSDs), so here its chunk of dist/ is loaded and used directly. And the
 * OpenTelemetry SDK, loaded only when a trace export is configured (docs/traces.md).
 */
describe('modules the bundle loads lazily', () => {
  beforeAll(requireBuiltAgent);

  it('agent cron create without arguments asks for the job on a terminal', async () => {
    const home = await makeAgentHome();
    try {
      // script(1) gives the command a terminal; what is written to it are the answers, in order.
      const terminal = spawn(
        'script',
        ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(AGENT_EXECUTABLE)} cron create --no-tick`, '/dev/null'],
        {
          env: { ...process.env, AGENT_HOME: home, NO_COLOR: '1', NODE_OPTIONS: '' },
        },
      );
      terminal.stdin.end('every 2h\nSay hello to the team\nhello\nlocal\n');

      const run = await outcomeOf(terminal);

      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Schedule (every 30m');
      expect(run.stdout).toMatch(/Created job [0-9a-f]{12} 'hello': every 2h/);
      expect(storedJobs(home)).toEqual([expect.objectContaining({ name: 'hello', prompt: 'Say hello to the team', deliver: 'local' })]);
    } finally {
      await removeAgentHome(home);
    }
  });

  const chunk = (name: string) => {
    const directory = join(dirname(AGENT_EXECUTABLE), 'chunks');
    const file = readdirSync(directory).find((entry) => new RegExp(`^${name}-[A-Z0-9]+\\.js$`).test(entry));
    if (!file) throw new Error(`dist/chunks holds no chunk for ${name}`);
    return import(pathToFileURL(join(directory, file)).href) as Promise<Record<string, unknown>>;
  };

  it('ps-tree, as the process table reads it (its default export), lists the children of a process', async () => {
    type Row = { PID: string; PPID: string; STAT: string };
    const { default: psTree } = (await chunk('ps-tree')) as {
      default: (pid: number, callback: (error: Error | null, children: Row[]) => void) => void;
    };

    const children = await new Promise<Row[]>((resolve, reject) => psTree(1, (error, rows) => (error ? reject(error) : resolve(rows))));

    // Init's own children, whatever their pids: a listing that does not depend on pid order
    // (ps-tree misses a child whose pid wrapped around below its parent's; see processTable.ts).
    const initChildren = children.filter((row) => Number(row.PPID) === 1);
    expect(initChildren.length).toBeGreaterThan(0);
    for (const row of initChildren) expect(Number.isInteger(Number(row.PID)) && row.STAT !== '').toBe(true);
  });

  describe('the OpenTelemetry SDK', () => {
    const REGISTER = fileURLToPath(new URL('../support/moduleLog/register.mjs', import.meta.url));

    /** The modules `agent cron list` loads, by URL, with `env` added. */
    async function modulesLoaded(env: Record<string, string>): Promise<string[]> {
      const home = await makeAgentHome();
      try {
        const log = join(home, 'modules.log');
        const run = await runAgent(['cron', 'list'], {
          home,
          env: { ...env, NODE_OPTIONS: `--import=${pathToFileURL(REGISTER).href}`, AGENT_TEST_MODULE_LOG: log },
        });
        expect(run).toMatchObject({ code: 0 });
        return readFileSync(log, 'utf8').split('\n').filter(Boolean);
      } finally {
        await removeAgentHome(home);
      }
    }
    const tracing = (url: string) =>
      /\/(OpenTelemetryRunTracing|otlpTraceExporter|otlpProtobufExporter|otlpJsonExporter)-[A-Z0-9]+\.js$/.test(url);

    it('is not loaded without OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
      const loaded = await modulesLoaded({});

      expect(loaded.some((url) => url.endsWith('/dist/agent.js'))).toBe(true);
      expect(loaded.filter(tracing)).toEqual([]);
    });

    it('is loaded, with the exporter of the protocol asked for, when the variable is set', async () => {
      const loaded = await modulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });

      expect(loaded.filter(tracing).map((url) => url.replace(/^.*\/(\w+)-[A-Z0-9]+\.js$/, '$1'))).toEqual([
        'OpenTelemetryRunTracing',
        'otlpTraceExporter',
        'otlpJsonExporter',
      ]);
    });
  });
});
