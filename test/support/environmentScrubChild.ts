import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { holdCredentials, ProcSelfEnvironment } from '../../src/adapters/system/environmentScrub.js';
import { isServiceCredential, NO_CHILD_ENVIRONMENT_POLICY } from '../../src/domain/childEnvironment.js';

/**
 * Run by environmentScrub.test.ts in a process of its own: takes the credentials out of this
 * process's environment (as `agent` does at start), then reports what the system shows of it, what
 * process.env and the held environment hold, and what a child started from process.env gets.
 * `darwin` as the argument stands for a system where the environment cannot be cleared.
 */
const platform = process.argv[2] === 'darwin' ? 'darwin' : process.platform;
const held = holdCredentials(
  { ...process.env, FROM_FILE_TOKEN: 'canary-read-from-a-file' },
  (name) => isServiceCredential(name, NO_CHILD_ENVIRONMENT_POLICY),
  new ProcSelfEnvironment(platform),
);
const env = held.environment;
// Set after the start, as the mark of AGENT_OWNER_PROCESS is: seen through the held environment.
process.env.AGENT_OWNER_PROCESS = 'host:1';
// A credential written later stays out of process.env.
env.LATE_TOKEN = 'canary-late';
const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], { encoding: 'utf8' });
process.stdout.write(
  JSON.stringify({
    environ: readFileSync('/proc/self/environ', 'latin1'),
    processEnv: { ...process.env },
    held: { ...env },
    has: { OPENAI_API_KEY: 'OPENAI_API_KEY' in env, AGENT_OWNER_PROCESS: 'AGENT_OWNER_PROCESS' in env },
    childEnv: JSON.parse(child.stdout) as Record<string, string>,
    left: held.stillShown(),
  }),
);
