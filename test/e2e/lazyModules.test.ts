import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AGENT_EXECUTABLE, makeAgentHome, outcomeOf, removeAgentHome, requireBuiltAgent, storedJobs } from './agentCli.js';
import { spawn } from '../support/testProcesses.js';

/**
 * Modules the bundle loads lazily that the other end-to-end tests do not reach: the questions of
 * `agent cron create` on a terminal, and ps-tree, which lists processes only where /proc is
 * missing (macOS, the BSDs), so here its chunk of dist/ is loaded and used directly.
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
});
