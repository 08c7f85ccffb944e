import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Job } from '../../src/domain/Job.js';
import { eventually, isRunning } from '../support/processLiveness.js';
import { spawn } from '../support/testProcesses.js';

/** The bundled executable that `npm test` builds before Jest starts. */
export const AGENT_EXECUTABLE = fileURLToPath(new URL('../../dist/agent.js', import.meta.url));

/** For a `beforeAll`: a missing bundle would otherwise show up as dozens of puzzling failures. */
export function requireBuiltAgent(): void {
  if (!existsSync(AGENT_EXECUTABLE)) {
    throw new Error(`${AGENT_EXECUTABLE} does not exist; build it with "npm run build" (npm test does so before Jest runs).`);
  }
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface AgentOptions {
  home: string;
  /** Added to the environment; undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
}

/**
 * The environment a user with a scratch home would have: nothing of ours leaks in from the
 * environment Jest runs in (AGENT_TIMEZONE, AGENT_CRON_TIMEOUT, NODE_OPTIONS …), no colour.
 */
function environmentFor(options: AgentOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('AGENT_')) delete env[name];
  delete env.NODE_OPTIONS;
  Object.assign(env, { AGENT_HOME: options.home, NO_COLOR: '1' });
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts `agent …` without waiting for it, stdout and stderr piped. */
export function startAgent(args: readonly string[], options: AgentOptions): ChildProcess {
  const child = spawn(process.execPath, [AGENT_EXECUTABLE, ...args], {
    env: environmentFor(options),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.on('error', () => undefined);
  child.stdin?.end(options.input ?? '');
  return child;
}

/** `agent gateway` started in `home`, with everything it writes (stdout and stderr) gathered. */
export function startGateway(
  home: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): { gateway: ChildProcess; output: () => string } {
  const gateway = startAgent(['gateway', ...args], { home, env });
  let output = '';
  gateway.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  gateway.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return { gateway, output: () => output };
}

/**
 * startGateway, resolving once the gateway wrote `line`; killed, with what it wrote in the
 * error, when it does not within `withinMs`.
 */
export async function startGatewayUntil(
  home: string,
  line: string,
  options: { args?: readonly string[]; env?: Record<string, string>; withinMs?: number } = {},
): Promise<{ gateway: ChildProcess; output: () => string }> {
  const started = startGateway(home, options.args, options.env);
  if (!(await eventually(() => started.output().includes(line), options.withinMs ?? 30_000))) {
    started.gateway.kill('SIGKILL');
    throw new Error(`the gateway did not write "${line}":\n${started.output()}`);
  }
  return started;
}

/** Runs `agent …` to its end: its exit code and everything it wrote. */
export function runAgent(args: readonly string[], options: AgentOptions): Promise<AgentRun> {
  return outcomeOf(startAgent(args, options));
}

/** Waits for a started `agent` to exit. `code` is null when a signal ended it. */
export function outcomeOf(child: ChildProcess): Promise<AgentRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What a failed command must look like: one `error:` sentence on stderr, no stack trace. */
export function errorSentence(run: AgentRun): string {
  const lines = run.stderr.trimEnd().split('\n');
  if (lines.length !== 1 || !lines[0]!.startsWith('error: ')) {
    throw new Error(`expected one "error: …" line on stderr, got:\n${run.stderr}`);
  }
  return lines[0]!;
}

/**
 * The stand-in for a model, run by `agent` through `model.command`. It records every run by
 * appending the prompt (the last line of its stdin) to `invocations.log` beside itself, then
 * answers `Answer to: <prompt>`. A prompt containing `[hang]` gets no answer at all: the program
 * records its pid in `hung.pids` and stays alive until it is killed. A prompt containing
 * `[sleep N]` is answered N seconds later (its pid is recorded in `hung.pids` meanwhile). The
 * value of AGENT_CRON_RUN it was started with, when set, goes to `cron-runs.log`.
 */
const MODEL_PROGRAM = `
import { appendFileSync } from 'node:fs';
const here = new URL('.', import.meta.url);
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  const prompt = input.trimEnd().split('\\n').at(-1);
  appendFileSync(new URL('invocations.log', here), prompt + '\\n');
  if (process.env.AGENT_CRON_RUN) appendFileSync(new URL('cron-runs.log', here), process.env.AGENT_CRON_RUN + '\\n');
  if (prompt.includes('[hang]')) {
    appendFileSync(new URL('hung.pids', here), process.pid + '\\n');
    setInterval(() => undefined, 60_000);
    return;
  }
  const sleep = /\\[sleep (\\d+)\\]/.exec(prompt);
  if (sleep) {
    appendFileSync(new URL('hung.pids', here), process.pid + '\\n');
    setTimeout(() => process.stdout.write('Answer to: ' + prompt + '\\n'), Number(sleep[1]) * 1000);
    return;
  }
  process.stdout.write('Answer to: ' + prompt + '\\n');
});
`;

export interface HomeOptions {
  /** `timezone` in config.yaml; default UTC, null to leave it out. */
  timezone?: string | null;
  /** Lines appended to config.yaml as they are. */
  extraConfig?: string;
  /**
   * Whether children run in the sandbox (`tools.sandbox` as configured, default auto). Off unless
   * asked for: the stand-in records its runs beside itself and its pid for the tests that kill it,
   * and a sandbox hides the one and renumbers the other (test/e2e/sandbox.test.ts covers it).
   */
  sandbox?: boolean;
}

/** `extra` with `tools.sandbox: off` in it: under its own `tools:` when it has one, else before it (tests append to the last mapping). */
export function withoutSandbox(extra: string): string {
  if (/^tools:\s*$/m.test(extra)) return extra.replace(/^tools:\s*$/m, 'tools:\n  sandbox: off');
  return `tools:\n  sandbox: off\n${extra}`;
}

/** A fresh AGENT_HOME with config.yaml whose model is the recording stand-in above. */
export async function makeAgentHome(options: HomeOptions = {}): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'agent-e2e-'));
  const model = join(home, 'model.mjs');
  await writeFile(model, MODEL_PROGRAM);
  const timezone = options.timezone === undefined ? 'UTC' : options.timezone;
  const config = [
    ...(timezone === null ? [] : [`timezone: ${timezone}`]),
    'model:',
    '  provider: command',
    `  command: ${JSON.stringify([process.execPath, model])}`,
    options.sandbox ? (options.extraConfig ?? '') : withoutSandbox(options.extraConfig ?? ''),
  ].join('\n');
  await writeFile(join(home, 'config.yaml'), `${config}\n`);
  return home;
}

/** Kills whatever stand-in model is still hanging, then deletes the home. */
export async function removeAgentHome(home: string): Promise<void> {
  for (const pid of hungModelPids(home)) {
    if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
  // Retried: a process the test ended a moment ago may have written its last file meanwhile.
  await rm(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

export function hungModelPids(home: string): number[] {
  const path = join(home, 'hung.pids');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map(Number);
}

/** The prompts the stand-in model was run with, one entry per run, in order. */
export function invocations(home: string): string[] {
  const path = join(home, 'invocations.log');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter(Boolean);
}

export function jobsFileOf(home: string): string {
  return join(home, 'cron', 'jobs.json');
}

/** The records in jobs.json as stored; empty when there is no file. */
export function storedJobs(home: string): Job[] {
  const path = jobsFileOf(home);
  if (!existsSync(path)) return [];
  return (JSON.parse(readFileSync(path, 'utf8')) as { jobs: Job[] }).jobs;
}

export function storedJob(home: string, id: string): Job {
  const job = storedJobs(home).find((candidate) => candidate.id === id);
  if (!job) throw new Error(`job ${id} is not in ${jobsFileOf(home)}`);
  return job;
}

/**
 * Changes one record in jobs.json behind the service's back, the way an operator with an
 * editor would, replacing the file atomically. Only for moments when no `agent` process runs.
 */
export async function editStoredJob(home: string, id: string, change: (job: Job) => void): Promise<void> {
  const path = jobsFileOf(home);
  const document = JSON.parse(await readFile(path, 'utf8')) as { jobs: Job[] };
  const job = document.jobs.find((candidate) => candidate.id === id);
  if (!job) throw new Error(`job ${id} is not in ${path}`);
  change(job);
  await writeFile(`${path}.edit`, `${JSON.stringify(document, null, 2)}\n`);
  await rename(`${path}.edit`, path);
}

/** Makes a job due now by moving its next run `agoMs` into the past (a one-shot must stay within 120 s). */
export function makeDue(home: string, id: string, agoMs = 5_000): Promise<void> {
  return editStoredJob(home, id, (job) => {
    job.next_run_at = new Date(Date.now() - agoMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  });
}

/** Creates a job with `agent cron create --no-tick` and returns its id. */
export async function createJob(home: string, args: readonly string[]): Promise<string> {
  const run = await runAgent(['cron', 'create', ...args, '--no-tick'], { home });
  const id = /^Created job ([0-9a-f]{12}) /.exec(run.stdout)?.[1];
  if (run.code !== 0 || !id) throw new Error(`agent cron create ${args.join(' ')} failed (${run.code}):\n${run.stderr}`);
  return id;
}

/** Puts a file into `$AGENT_HOME/<relativePath>`, creating directories on the way. */
export async function writeHomeFile(home: string, relativePath: string, content: string): Promise<string> {
  const path = join(home, relativePath);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, content);
  return path;
}

/**
 * For a describe block: the built executable is required, and every test runs in a fresh scratch
 * home (made before it, removed after it, stand-in model processes included) handed to `use`.
 */
export function inAScratchHomeEachTest(use: (home: string) => void, options: HomeOptions = {}): void {
  let current: string;
  beforeAll(requireBuiltAgent);
  beforeEach(async () => {
    current = await makeAgentHome(options);
    use(current);
  });
  afterEach(async () => {
    await removeAgentHome(current);
  });
}
