import { readFile, rename, writeFile } from 'node:fs/promises';
import { seededRandom } from '../support/seededRandom.js';
import { type AgentRun, createJob, jobsFileOf, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent } from './agentCli.js';

/**
 * A property of the whole command line, checked on generated argv against the built executable:
 * whatever a user types — a known command with its flags left empty, negated (`--no-x`), given
 * twice or given odd values — `agent` exits 0, 1 or 2; on 1 and 2 it says one `error:` sentence;
 * it never prints a stack trace or "something unexpected went wrong"; and a command that fails
 * leaves jobs.json byte for byte as it was.
 *
 * Every argv costs a process start, so the cases are few and drawn afresh on each run from a
 * seeded generator: a failure names its seed, and ARGV_PROPERTY_SEED=<seed> draws the same
 * cases again, and ARGV_PROPERTY_CASES=<n> draws more of them for a longer hunt. The cases the
 * command line once got wrong come first, on every run.
 */

/** The commands tried, each with the job or route it names already in place, and its flags. */
const COMMANDS: ReadonlyArray<{ argv: readonly string[]; flags: readonly string[] }> = [
  { argv: ['cron', 'list'], flags: ['json', 'tick'] },
  { argv: ['cron', 'ls'], flags: ['json'] },
  { argv: ['cron', 'show', 'digest'], flags: ['json', 'job'] },
  { argv: ['cron', 'runs', 'digest'], flags: ['json', 'limit'] },
  {
    argv: ['cron', 'create', 'every 1h', 'Generated'],
    flags: ['name', 'deliver', 'skill', 'skills', 'script', 'repeat', 'model', 'provider'],
  },
  { argv: ['cron', 'create'], flags: ['schedule', 'prompt', 'name', 'deliver'] },
  {
    argv: ['cron', 'edit', 'digest'],
    flags: ['schedule', 'prompt', 'name', 'deliver', 'skill', 'script', 'repeat', 'model', 'provider', 'clear-skills', 'clear-script'],
  },
  { argv: ['cron', 'pause', 'digest'], flags: ['tick'] },
  { argv: ['cron', 'enable', 'digest'], flags: ['tick'] },
  { argv: ['cron', 'run', 'digest'], flags: ['force', 'tick'] },
  { argv: ['cron', 'redeliver', 'digest'], flags: ['run', 'tick'] },
  { argv: ['cron', 'delete', 'digest'], flags: ['tick'] },
  { argv: ['cron', 'status'], flags: ['tick'] },
  { argv: ['cron', 'tick'], flags: ['verbose'] },
  { argv: ['webhook', 'subscribe', 'generated'], flags: ['events', 'prompt', 'skills', 'deliver', 'deliver-chat-id', 'secret'] },
  { argv: ['webhook', 'list'], flags: ['json'] },
  { argv: ['webhook', 'runs'], flags: ['route', 'limit', 'json'] },
  { argv: ['webhook', 'redeliver', 'some-run'], flags: ['run'] },
  { argv: ['send', 'telegram', 'hello'], flags: ['json'] },
  { argv: ['channels', 'list'], flags: ['platform', 'json'] },
  { argv: ['config', 'check'], flags: ['json'] },
  { argv: ['status'], flags: ['json'] },
  { argv: ['chat'], flags: ['q', 'query-file', 'profile', 'provider', 'model'] },
];

/** Values that have tripped command lines: empty, blank, dash-like, numeric edge cases, odd text. */
const ODD_VALUES = [
  '',
  ' ',
  '-',
  '--',
  '0',
  '-1',
  '1.5',
  '1e3',
  'false',
  'true',
  'NaN',
  '☃',
  'two\nlines',
  '"',
  '{}',
  '@daily',
  'in 30m',
  'local',
  'telegram:',
  ',,',
  '../outside',
  'x'.repeat(500),
];

/** The regressions the property is first of all about, tried on every run. */
const KNOWN_CASES: ReadonlyArray<readonly string[]> = [
  ['cron', 'create', 'every 1h', 'hi', '--no-deliver'],
  ['cron', 'create', 'every 1h', 'hi', '--no-name'],
  ['cron', 'edit', 'digest', '--no-schedule'],
  ['cron', 'edit', 'digest', '--no-prompt'],
  ['cron', 'edit', 'digest', '--skill'],
  ['cron', 'edit', 'digest', '--deliver'],
  ['webhook', 'subscribe', 'generated', '--no-deliver'],
  ['chat', '--no-q'],
  // The positional given again as a flag of its name (seed 421582306 found it).
  ['cron', 'show', 'digest', '--job', 'telegram:', '--job', '', '--job', ''],
  ['webhook', 'subscribe', 'generated', '--name', 'other'],
  ['cron', 'redeliver', 'digest', '--run'],
  ['cron', 'redeliver', 'digest', '--no-run'],
  ['webhook', 'redeliver', ''],
];

/** How many generated cases each run adds to the known ones (ARGV_PROPERTY_CASES for a longer hunt). */
const GENERATED = Number(process.env.ARGV_PROPERTY_CASES ?? 16);

function generatedArgv(random: () => number): string[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const command = pick(COMMANDS);
  const argv = [...command.argv];
  const flagCount = 1 + Math.floor(random() * 3);
  for (let index = 0; index < flagCount; index += 1) {
    const flag = pick(command.flags);
    const dashed = flag.length === 1 ? `-${flag}` : `--${flag}`;
    switch (pick(['bare', 'empty', 'equals-empty', 'negated', 'twice', 'odd', 'odd'] as const)) {
      case 'bare':
        argv.push(dashed);
        break;
      case 'empty':
        argv.push(dashed, '');
        break;
      case 'equals-empty':
        argv.push(`--${flag}=`);
        break;
      case 'negated':
        argv.push(`--no-${flag}`);
        break;
      case 'twice':
        argv.push(dashed, pick(ODD_VALUES), dashed, pick(ODD_VALUES));
        break;
      case 'odd':
        argv.push(dashed, pick(ODD_VALUES));
        break;
    }
  }
  return argv;
}

/** What is wrong with a run as the property sees it, or null. */
function violation(run: AgentRun, storeChanged: boolean): string | null {
  const output = `${run.stdout}\n${run.stderr}`;
  if (run.code === null || ![0, 1, 2].includes(run.code)) return `exit code ${run.code}`;
  if (output.includes('something unexpected went wrong')) return 'an unexpected error';
  if (/^\s+at .+:\d+:\d+\)?$/m.test(output)) return 'a stack trace';
  if (run.code === 0) return null;
  const errorLines = run.stderr.split('\n').filter((line) => line.startsWith('error: '));
  if (errorLines.length !== 1) return `${errorLines.length} error lines instead of one`;
  if (storeChanged) return `jobs.json changed although the command failed (exit ${run.code})`;
  return null;
}

describe('any argv a user could type', () => {
  const seed = Number(process.env.ARGV_PROPERTY_SEED ?? Date.now() % 2 ** 31);
  let homes: string[] = [];
  let storeBytes: Buffer;

  beforeAll(async () => {
    requireBuiltAgent();
    homes = await Promise.all([makeAgentHome(), makeAgentHome()]);
    for (const home of homes) await createJob(home, ['every 1h', 'Send the digest', '--name', 'digest', '--deliver', 'local']);
    storeBytes = await readFile(jobsFileOf(homes[0]!));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(homes.map(removeAgentHome));
  });

  /** Puts the job store back as it was, so that each case starts from the same store. */
  async function resetStore(home: string): Promise<void> {
    await writeFile(`${jobsFileOf(home)}.reset`, storeBytes);
    await rename(`${jobsFileOf(home)}.reset`, jobsFileOf(home));
  }

  it(
    `exits 0, 1 or 2, says one error sentence on failure, never crashes, and changes no job on failure (seed ${seed})`,
    async () => {
      const random = seededRandom(seed);
      const cases = [...KNOWN_CASES, ...Array.from({ length: GENERATED }, () => generatedArgv(random))];
      const failures: string[] = [];

      // One queue per home: two processes at a time, each home used by one of them.
      const next = () => cases.shift();
      await Promise.all(
        homes.map(async (home) => {
          for (let argv = next(); argv !== undefined; argv = next()) {
            await resetStore(home);
            const run = await runAgent(argv, { home });
            const storeChanged = !(await readFile(jobsFileOf(home))).equals(storeBytes);
            const wrong = violation(run, storeChanged);
            if (wrong) failures.push(`${JSON.stringify(argv)}: ${wrong}\n  exit ${run.code}, stderr: ${JSON.stringify(run.stderr)}`);
          }
        }),
      );

      expect(failures).toEqual([]);
    },
    60_000 + GENERATED * 3_000,
  );
});
