import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type AgentRun,
  createJob,
  errorSentence,
  inAScratchHomeEachTest,
  jobsFileOf,
  runAgent,
  storedJob,
  writeHomeFile,
} from './agentCli.js';

/**
 * `--no-<flag>` and empty flag values, as a user types them: a `--no-` form either means what
 * docs/cron.md says or is refused in one sentence (exit 2), and an empty value is always refused;
 * neither reaches the store.
 */
describe('--no-<flag> and empty flag values', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const agent = (...args: string[]) => runAgent(args, { home });

  function usageError(run: AgentRun): string {
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
    return errorSentence(run);
  }

  async function digest(): Promise<string> {
    await writeHomeFile(home, 'scripts/prepare.mjs', 'console.log(1);\n');
    return createJob(home, [
      'every 1h',
      'Send the digest',
      '--name',
      'digest',
      '--deliver',
      'telegram:42',
      '--skill',
      'triage',
      '--script',
      'prepare.mjs',
      '--repeat',
      '5',
      '--model',
      'small',
      '--provider',
      'command',
    ]);
  }

  it('cron create --no-deliver keeps the answers local, and --no-skills, --no-script, --no-repeat mean none', async () => {
    const run = await agent('cron', 'create', 'every 1h', 'Check the feeds', '--no-deliver', '--no-skills', '--no-script', '--no-repeat');

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/delivers to local\.\n$/);
    const id = /^Created job ([0-9a-f]{12})/.exec(run.stdout)![1]!;
    expect(storedJob(home, id)).toMatchObject({ deliver: 'local', skills: [], script: null, repeat: { times: null } });
  });

  it('cron edit --no-deliver, --no-skill, --no-script, --no-repeat, --no-model and --no-provider undo those settings', async () => {
    const id = await digest();

    const run = await agent(
      'cron',
      'edit',
      'digest',
      '--no-deliver',
      '--no-skill',
      '--no-script',
      '--no-repeat',
      '--no-model',
      '--no-provider',
    );

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(storedJob(home, id)).toMatchObject({
      deliver: 'local',
      skills: [],
      script: null,
      repeat: { times: null },
      model: null,
      provider: null,
      prompt: 'Send the digest',
    });
  });

  it('cron edit --no-agent runs only the script, and --agent runs the agent again', async () => {
    const id = await digest();

    // (Its telegram target and its skill are not set up here: warnings only.)
    const off = await agent('cron', 'edit', 'digest', '--no-agent');
    expect(off.code).toBe(0);
    expect(storedJob(home, id)).toMatchObject({ no_agent: true, script: 'prepare.mjs', prompt: 'Send the digest' });

    expect((await agent('cron', 'edit', 'digest', '--agent')).code).toBe(0);
    expect(storedJob(home, id).no_agent).toBe(false);
  });

  it('refuses the --no- forms that mean nothing in one sentence each, leaving the store as it was', async () => {
    await digest();
    const before = readFileSync(jobsFileOf(home));

    const runs = await Promise.all([
      agent('cron', 'create', 'every 1h', 'Another', '--no-name'),
      agent('cron', 'edit', 'digest', '--no-schedule'),
      agent('cron', 'edit', 'digest', '--no-prompt'),
      agent('cron', 'edit', 'digest', '--no-name'),
      agent('cron', 'create', 'every 1h', '--no-prompt'),
      agent('cron', 'edit', 'digest', '--no-catch-up'),
    ]);

    expect(runs.map(usageError)).toEqual([
      'error: --no-name is not an option; give --name a value or leave it out.',
      'error: --no-schedule is not an option; give --schedule a value or leave it out.',
      'error: --no-prompt is not an option; give --prompt a value or leave it out.',
      'error: --no-name is not an option; give --name a value or leave it out.',
      'error: --no-prompt is not an option; give the prompt as an argument.',
      'error: --no-catch-up is not an option; give --catch-up a value or leave it out.',
    ]);
    expect(readFileSync(jobsFileOf(home))).toEqual(before);
  });

  it('refuses an empty value for a flag that takes one, saying what to give instead, and changes nothing', async () => {
    const id = await digest();
    const before = readFileSync(jobsFileOf(home));

    const runs = await Promise.all([
      agent('cron', 'edit', 'digest', '--skill'),
      agent('cron', 'edit', 'digest', '--deliver'),
      agent('cron', 'edit', 'digest', '--model', ''),
      agent('cron', 'edit', 'digest', '--provider', ' '),
      agent('cron', 'edit', 'digest', '--name', ''),
      agent('cron', 'create', 'every 1h', 'Another', '--script='),
    ]);

    expect(runs.map(usageError)).toEqual([
      'error: --skill needs a value; give one, or give --no-skill (no skills).',
      'error: --deliver needs a value; give one, or give --no-deliver (answers stay in the output files).',
      'error: --model needs a value; give one, or give --no-model (the model from config.yaml).',
      'error: --provider needs a value; give one, or give --no-provider (the provider from config.yaml).',
      'error: --name needs a value; give one or leave the flag out.',
      'error: --script needs a value; give one, or give --no-script (no script).',
    ]);
    expect(readFileSync(jobsFileOf(home))).toEqual(before);
    expect(storedJob(home, id)).toMatchObject({ deliver: 'telegram:42', skills: ['triage'] });
  });

  it('refuses --skill together with --no-skill', async () => {
    await digest();

    expect(usageError(await agent('cron', 'edit', 'digest', '--skill', 'tone', '--no-skill'))).toBe(
      'error: Give either --skill or --no-skill, not both.',
    );
  });

  it('webhook subscribe --no-deliver only logs the answers; --no-events is refused and writes no subscription', async () => {
    const [subscribed, refused] = [
      await agent('webhook', 'subscribe', 'builds', '--no-deliver', '--no-skills'),
      await agent('webhook', 'subscribe', 'deploys', '--no-events'),
    ];

    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toMatch(/^Deliver: log$/m);
    expect(usageError(refused)).toBe('error: --no-events is not an option; give --events a value or leave it out.');
    const subscriptions = JSON.parse(readFileSync(join(home, 'webhook_subscriptions.json'), 'utf8')) as unknown;
    expect(JSON.stringify(subscriptions)).not.toContain('deploys');
  });

  it('agent chat refuses --no-q and an empty -q in one sentence', async () => {
    const runs = await Promise.all([agent('chat', '--no-q'), agent('chat', '-q', '')]);

    expect(runs.map(usageError)).toEqual([
      'error: --no-q is not an option; give -q a value or leave it out.',
      'error: -q needs a value; give one or leave the flag out.',
    ]);
  });
});
