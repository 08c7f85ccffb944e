import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Every child process starts through adapters/process/ChildProcessRunner, so
 * that process groups, caps, timeouts and tree kills cannot drift apart again. The only other
 * users of node:child_process are its lazy loader, the Windows tree killer, whose `taskkill`
 * the runner itself relies on, and the gateway's launcher, which forks for the runner (its
 * client starts the launcher process, the launcher starts what the runner asks), and the stdio
 * transport of MCP servers, which keep their pipes open for as long as they serve (the runner
 * runs a child to its end); it starts them the runner's way: sandbox, own group, tree mark.
 */
const SRC = resolve('src');
const ALLOWED = [
  'adapters/process/ChildProcessRunner.ts',
  'adapters/process/childProcesses.ts',
  'adapters/process/WindowsProcessTreeKiller.ts',
  'adapters/process/launcherMain.ts',
  'adapters/process/launcherSpawner.ts',
  'adapters/mcp/SandboxedStdioTransport.ts',
];
/** A value import of node:child_process, a dynamic one, or a call of its lazy loader. */
const STARTS_PROCESSES =
  /import\s+(?!type\b)[^;]*from\s+['"](node:)?child_process['"]|import\(\s*['"](node:)?child_process['"]\s*\)|\bchildProcesses\(\)/;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('child processes', () => {
  it('are started only through ChildProcessRunner', () => {
    const starters = sourceFiles(SRC)
      .filter((file) => STARTS_PROCESSES.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file).split(/[\\/]/).join('/'));

    expect(starters.filter((file) => !ALLOWED.includes(file))).toEqual([]);
  });
});
