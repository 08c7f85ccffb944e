import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AGENT_EXECUTABLE, requireBuiltAgent } from './agentCli.js';

/**
 * A SIGTERM during the gateway's start-up must stop it (exit 0), not kill it. Node runs none of
 * our code before it has parsed every module the entry imports statically, so the built entry
 * must be tiny and install the stop-signal handlers before it loads the program. When exactly a
 * signal arrives cannot be arranged from outside, so this checks the shape that makes the window
 * as short as Node allows.
 */
describe('the built executable', () => {
  beforeAll(requireBuiltAgent);

  const entry = () => readFileSync(AGENT_EXECUTABLE, 'utf8');
  const staticImports = (text: string) => [...text.matchAll(/import\s*"(\.\/chunks\/[^"]+)"/g)].map((match) => match[1]!);

  it('is a small entry that loads the program only by a dynamic import', () => {
    const text = entry();

    expect(Buffer.byteLength(text)).toBeLessThan(1_024);
    expect(text).toMatch(/await import\("\.\/chunks\/main-[\w-]+\.js"\)/);
    expect(text).not.toMatch(/yargs/);
  });

  it('installs the SIGTERM and SIGINT handlers in what it imports before the program, and nothing large', () => {
    const chunks = staticImports(entry()).map((path) => readFileSync(join(dirname(AGENT_EXECUTABLE), path), 'utf8'));

    expect(chunks.some((chunk) => chunk.includes('"SIGTERM"') && chunk.includes('"SIGINT"'))).toBe(true);
    expect(chunks.reduce((total, chunk) => total + Buffer.byteLength(chunk), 0)).toBeLessThan(8_192);
  });
});
