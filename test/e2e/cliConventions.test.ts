import { chmod, readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AGENT_EXECUTABLE,
  type AgentRun,
  createJob,
  errorSentence,
  inAScratchHomeEachTest,
  invocations,
  jobsFileOf,
  makeDue,
  outcomeOf,
  runAgent,
  startAgent,
  storedJob,
  storedJobs,
  writeHomeFile,
} from './agentCli.js';
import { commandModelLines } from './configLines.js';
import { spawn } from '../support/testProcesses.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const TOP_COMMANDS = 'cron, chat, webhook, runs, events, send, platforms, channels, config, status, db, mcp, gateway';

/** The command-line conventions every `agent` command follows (exit codes, help, messages). */
describe('agent command-line conventions', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const agent = (...args: string[]) => runAgent(args, { home });

  function failure(run: AgentRun, code: number): string {
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code, stdout: '' });
    return errorSentence(run);
  }

  it('--version prints the version of the package', async () => {
    expect(await agent('--version')).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
  });

  it.each([
    [['-h'], 'agent <command>'],
    [['--help'], 'agent <command>'],
    [['cron', '-h'], 'agent cron'],
    [['cron', 'list', '-h'], 'agent cron list'],
    [['cron', 'create', '--help'], 'agent cron create [schedule] [prompt]'],
    [['cron', 'edit', '-h'], 'agent cron edit <job>'],
    [['cron', 'tick', '-h'], 'agent cron tick'],
    [['webhook', 'subscribe', '-h'], 'agent webhook subscribe <name>'],
    [['send', '-h'], 'agent send <target> [text..]'],
    [['gateway', '-h'], 'agent gateway'],
    [['chat', '-h'], 'agent chat'],
    [['channels', 'list', '-h'], 'agent channels list'],
  ])("%j prints that command's help and exits 0", async (args, usage) => {
    const run = await agent(...args);

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n')[0]).toBe(usage);
    expect(run.stdout).toMatch(/-h, --help/);
  });

  it('lays out help whose text is not all ASCII (the real string-width, loaded from node_modules on demand)', async () => {
    const run = await agent('cron', 'create', '--help');

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('telegram:<chat_id>, …');
    const annotated = run.stdout.split('\n').filter((line) => /\[(string|boolean)\]( \[default: [^\]]+\])?$/.test(line));
    expect(new Set(annotated.map((line) => line.length))).toEqual(new Set([100]));
  });

  describe('unknown and missing commands', () => {
    it('names an unknown command and lists the commands', async () => {
      expect(failure(await agent('launch'), 2)).toBe(
        `error: Unknown command "launch"; the commands are: ${TOP_COMMANDS} (see "agent --help").`,
      );
    });

    /** The commands a "the cron commands are: …" sentence lists. */
    const listedIn = (message: string) => /commands are: ([^(]+) \(see/.exec(message)?.[1]?.split(', ') ?? [];
    const CRON_COMMANDS = ['list', 'create', 'edit', 'pause', 'resume', 'run', 'remove', 'status', 'tick'];

    it("names an unknown subcommand and lists that group's commands", async () => {
      const message = failure(await agent('cron', 'frob'), 2);

      expect(message).toMatch(/^error: Unknown command "frob"; the cron commands are: .+ \(see "agent cron --help"\)\.$/);
      expect(listedIn(message)).toEqual(expect.arrayContaining(CRON_COMMANDS));
    });

    it('lists the commands when none is named', async () => {
      const [top, cron, webhook] = await Promise.all([agent(), agent('cron'), agent('webhook')]);

      expect(failure(top, 2)).toBe(`error: Name a command; the commands are: ${TOP_COMMANDS} (see "agent --help").`);
      expect(failure(cron, 2)).toMatch(/^error: Name a cron command; the cron commands are: .+ \(see "agent cron --help"\)\.$/);
      expect(listedIn(cron.stderr)).toEqual(expect.arrayContaining(CRON_COMMANDS));
      expect(failure(webhook, 2)).toMatch(/^error: Name a webhook command; the webhook commands are: subscribe, list, remove/);
    });

    it('shows how a command is written when its arguments are missing', async () => {
      expect(failure(await agent('cron', 'edit'), 2)).toBe(
        'error: Too few arguments; use: agent cron edit <job> (see "agent cron edit --help").',
      );
    });
  });

  describe('bad flag values', () => {
    it.each([
      [['cron', 'create', 'every 1h', 'hi', '--repeat', 'abc'], 'error: --repeat must be a whole number of 1 or more, not "abc".'],
      [['cron', 'create', 'every 1h', 'hi', '--repeat', '0'], 'error: --repeat must be a whole number of 1 or more, not "0".'],
      [['cron', 'create', 'every 1h', 'hi', '--repeat', '2.5'], 'error: --repeat must be a whole number of 1 or more, not "2.5".'],
      [['cron', 'create', 'every 1h', 'hi', '--repeat=-1'], 'error: --repeat must be a whole number of 1 or more, not "-1".'],
      [['cron', 'create', 'every 1h', 'hi', '--repeat'], 'error: --repeat must be a whole number of 1 or more, not nothing.'],
      [['cron', 'create', 'every 1h', 'hi', '--repeat', '1', '--repeat', '2'], 'error: --repeat was given 2 times; give it once.'],
      [['gateway', '--log-format', 'xml'], 'error: --log-format must be one of text, json, not "xml".'],
    ])('%j is refused in one sentence (exit 2) and changes nothing', async (args, sentence) => {
      expect(failure(await agent(...args), 2)).toBe(sentence);
      expect(storedJobs(home)).toEqual([]);
    });

    it('edit --repeat takes 0 for no limit and refuses what is not a whole number', async () => {
      const id = await createJob(home, ['every 1h', 'Count me', '--repeat', '3']);

      expect(failure(await agent('cron', 'edit', id, '--repeat', 'x'), 2)).toBe(
        'error: --repeat must be a whole number of 0 or more (0 means no limit), not "x".',
      );
      expect(storedJob(home, id).repeat).toEqual({ times: 3, completed: 0 });
      expect((await agent('cron', 'edit', id, '--repeat', '0', '--no-tick')).code).toBe(0);
      expect(storedJob(home, id).repeat).toEqual({ times: null, completed: 0 });
    });
  });

  describe('job names', () => {
    it('refuses a --name another job has (any case) and numbers a default name that is taken', async () => {
      const digest = await createJob(home, ['every 1h', 'Summarise', '--name', 'Digest']);
      await createJob(home, ['every 2h', 'Check the feeds']);
      await createJob(home, ['every 3h', 'Check the feeds']);

      const refused = await agent('cron', 'create', 'every 4h', 'Other', '--name', 'DIGEST', '--no-tick');

      expect(failure(refused, 1)).toBe(
        `error: The name "DIGEST" is already used by job ${digest} ('Digest'); choose another name, or edit or remove that job.`,
      );
      expect(storedJobs(home).map((job) => job.name)).toEqual(['Digest', 'Check the feeds', 'Check the feeds (2)']);
    });

    it('refuses renaming a job to the name of another', async () => {
      const digest = await createJob(home, ['every 1h', 'Summarise', '--name', 'Digest']);
      const planner = await createJob(home, ['every 1h', 'Plan', '--name', 'Planner']);

      expect(failure(await agent('cron', 'edit', planner, '--name', 'digest', '--no-tick'), 1)).toContain(
        `The name "digest" is already used by job ${digest}`,
      );
      expect(storedJob(home, planner).name).toBe('Planner');
    });

    it('gives concurrent creates of one prompt different names', async () => {
      await Promise.all(Array.from({ length: 4 }, () => createJob(home, ['every 1h', 'Same prompt'])));

      expect(
        storedJobs(home)
          .map((job) => job.name)
          .sort(),
      ).toEqual(['Same prompt', 'Same prompt (2)', 'Same prompt (3)', 'Same prompt (4)']);
    });
  });

  describe('inside a cron run (AGENT_CRON_RUN set)', () => {
    const insideRun = (...args: string[]) => runAgent(args, { home, env: { AGENT_CRON_RUN: 'f00dfeedbeef' } });

    it.each([
      ['cron', 'create', 'every 1h', 'Sneaky'],
      ['cron', 'add', 'every 1h', 'Sneaky'],
      ['cron', 'edit', 'Target', '--name', 'Renamed'],
      ['cron', 'pause', 'Target'],
      ['cron', 'resume', 'Target'],
      ['cron', 'run', 'Target'],
      ['cron', 'remove', 'Target'],
      ['cron', 'rm', 'Target'],
      ['cron', 'delete', 'Target'],
      ['cron', 'disable', 'Target'],
      ['cron', 'enable', 'Target'],
      ['cron', 'tick'],
      ['webhook', 'subscribe', 'sneaky'],
      ['webhook', 'remove', 'sneaky'],
    ])('%s %s is refused with exit 1 and changes nothing', async (...args) => {
      await createJob(home, ['every 1h', 'Run me', '--name', 'Target']);
      const before = await readFile(jobsFileOf(home));

      const message = failure(await insideRun(...args), 1);

      expect(message).toMatch(
        /cannot be used from inside a cron run \(job f00dfeedbeef\); scheduled runs may not create, change or schedule jobs\.$/,
      );
      expect(await readFile(jobsFileOf(home))).toEqual(before);
      expect(invocations(home)).toEqual([]);
    });

    it('refuses a command whose own environment was cleaned of AGENT_CRON_RUN, from its ancestry', async () => {
      // The agent program of a real cron run tries to escape the guard with `env -u`.
      const attempt = `env -u AGENT_CRON_RUN -u AGENT_OWNER_PROCESS ${JSON.stringify(process.execPath)} ${JSON.stringify(AGENT_EXECUTABLE)} cron create "every 30m" y --name Escaped --no-tick`;
      await writeHomeFile(
        home,
        'config.yaml',
        [
          'timezone: UTC',
          ...commandModelLines([
            'sh',
            '-c',
            `${attempt} > ${join(home, 'escape.out')} 2>&1; echo "exit $?" >> ${join(home, 'escape.out')}; echo answered`,
          ]),
          '',
        ].join('\n'),
      );
      const id = await createJob(home, ['every 1h', 'Try it', '--name', 'Escaper', '--deliver', 'local']);

      expect((await runAgent(['cron', 'run', id], { home })).code).toBe(0);

      const escape = await readFile(join(home, 'escape.out'), 'utf8');
      expect(escape).toContain(`cannot be used from inside a cron run (job ${id})`);
      expect(escape).toContain('exit 1');
      expect(storedJobs(home).map((job) => job.name)).toEqual(['Escaper']);
    });

    it('cron list still lists, and fires no due job', async () => {
      const id = await createJob(home, ['every 1h', 'Due now', '--name', 'Due']);
      await makeDue(home, id);
      const before = await readFile(jobsFileOf(home));

      const run = await insideRun('cron', 'list');

      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(new RegExp(`^${id} +Due `, 'm'));
      expect(invocations(home)).toEqual([]);
      expect(await readFile(jobsFileOf(home))).toEqual(before);
    });
  });

  describe('a home this user cannot write', () => {
    // Root writes anywhere: as root, the command runs as "nobody" instead.
    const asOtherUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

    function runAsUser(args: string[]): Promise<AgentRun> {
      const child = spawn(process.execPath, [AGENT_EXECUTABLE, ...args], {
        env: { PATH: process.env.PATH, AGENT_HOME: home, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...asOtherUser,
      });
      return outcomeOf(child);
    }

    async function makeReadOnly(): Promise<void> {
      await chmod(jobsFileOf(home), 0o444);
      for (const file of ['config.yaml', 'model.mjs']) await chmod(join(home, file), 0o444);
      await chmod(join(home, 'cron'), 0o555);
      await chmod(home, 0o555);
    }

    afterEach(async () => {
      await chmod(home, 0o755);
      await chmod(join(home, 'cron'), 0o755);
    });

    it('cron list warns in one line that due jobs were not run, and lists the jobs', async () => {
      const id = await createJob(home, ['every 1h', 'Due now', '--name', 'Due']);
      await makeDue(home, id);
      await makeReadOnly();

      const run = await runAsUser(['cron', 'list']);

      expect(run.code).toBe(0);
      expect(run.stderr).toBe(`warning: ${join(home, 'cron')} is not writable (EACCES); due jobs were not run (the tick was skipped).\n`);
      expect(run.stdout).toMatch(new RegExp(`^${id} +Due `, 'm'));
      expect(invocations(home)).toEqual([]);
    });

    it('a command that must write still fails in one sentence', async () => {
      await createJob(home, ['every 1h', 'Keep me']);
      await makeReadOnly();

      const run = await runAsUser(['cron', 'create', 'every 1h', 'Cannot', '--no-tick']);

      expect(failure(run, 1)).toMatch(/this user lacks permission there \(EACCES\)/);
    });
  });

  describe('a reader that goes away', () => {
    it('ends the command quietly when stdout is closed after the first chunk', async () => {
      const id = await createJob(home, ['every 1h', 'A prompt long enough to make the listing bigger than a pipe holds']);
      const document = JSON.parse(await readFile(jobsFileOf(home), 'utf8')) as { jobs: Array<Record<string, unknown>> };
      const [record] = document.jobs;
      document.jobs = Array.from({ length: 400 }, (_, n) => ({ ...record, id: n.toString(16).padStart(12, '0'), name: `job ${n}` }));
      await writeFile(jobsFileOf(home), JSON.stringify(document));
      expect(id).toBeDefined();

      const child = startAgent(['cron', 'list', '--json', '--no-tick'], { home });
      child.stdout!.once('data', () => child.stdout!.destroy());
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));

      expect(stderr).toBe('');
      expect(code).toBe(0);
    });
  });
});
