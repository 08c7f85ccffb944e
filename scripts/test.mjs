// `npm test`: type-checks, builds and runs the whole suite (arguments go to Jest). The type check
// runs beside the build and the suite rather than before them: on a machine whose cores are busy
// with other work, the suite's wall time is what the three add up to otherwise. The command fails
// when either fails, and the type checker's errors are printed once the suite is done.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Runs `args` with this Node; resolves with its exit code and, when `capture`, what it printed. */
function run(args, { capture = false, env = process.env } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit', env });
    let output = '';
    if (capture) {
      child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    }
    child.on('error', (error) => resolve({ code: 1, output: `${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const typeCheck = run([require.resolve('typescript/bin/tsc'), '-p', '.'], { capture: true });
const built = await run(['scripts/build.mjs']);
const suite =
  built.code === 0
    ? await run([require.resolve('jest/bin/jest'), ...process.argv.slice(2)], {
        env: { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS, '--experimental-vm-modules'].filter(Boolean).join(' ') },
      })
    : built;
const checked = await typeCheck;
if (checked.code !== 0) {
  process.stderr.write(`\nThe type check failed (tsc -p .):\n${checked.output}`);
}
process.exitCode = suite.code !== 0 ? suite.code : checked.code;
