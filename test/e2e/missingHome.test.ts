import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorSentence, requireBuiltAgent, runAgent } from './agentCli.js';

/** A mistyped AGENT_HOME: the commands that only look say so and create nothing. */
describe('read-only commands in a home that does not exist, end to end', () => {
  let parent: string;
  let home: string;

  beforeAll(requireBuiltAgent);
  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'agent-e2e-nohome-'));
    home = join(parent, 'agnet-home');
  });
  afterEach(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  it.each([
    [['cron', 'list'], 'No scheduled jobs.'],
    [['cron', 'list', '--json'], '[]'],
    [['webhook', 'list'], 'No webhook routes.'],
    [['webhook', 'runs'], 'No webhook runs.'],
    [['platforms'], 'telegram'],
    [['channels', 'list'], 'No channels known yet'],
  ])('agent %j warns in one sentence, exits 0 and creates nothing', async (args, output) => {
    const run = await runAgent(args, { home });

    expect(run.code).toBe(0);
    expect(run.stdout).toContain(output);
    expect(run.stderr).toBe(
      `warning: the home ${home} does not exist, so nothing is stored there yet; check AGENT_HOME (a command that creates something creates it).\n`,
    );
    expect(existsSync(home)).toBe(false);
  });

  it('agent status says nothing runs there', async () => {
    const run = await runAgent(['status'], { home });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `warning: the home ${home} does not exist, so no gateway runs there and it holds no jobs; check AGENT_HOME (a command that creates something creates it).\n`,
    );
    expect(existsSync(home)).toBe(false);
  });

  it('agent config check warns once, naming config.yaml and the missing home', async () => {
    const run = await runAgent(['config', 'check'], { home });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `warning: ${join(home, 'config.yaml')} does not exist (nor does the home ${home}; check AGENT_HOME); every setting has its default.\n`,
    );
    expect(existsSync(home)).toBe(false);
  });

  it.each([
    [['cron', 'show', 'digest'], 'error: No job has the id or name "digest": the home HOME does not exist; check AGENT_HOME.'],
    [['cron', 'runs', 'digest'], 'error: No job has the id or name "digest": the home HOME does not exist; check AGENT_HOME.'],
    [['webhook', 'runs', 'github'], 'error: No webhook route is named "github": the home HOME does not exist; check AGENT_HOME.'],
  ])('agent %j fails in one sentence naming the missing home', async (args, sentence) => {
    const run = await runAgent(args, { home });

    expect(run.code).toBe(1);
    expect(errorSentence(run)).toBe(sentence.replace('HOME', home));
    expect(existsSync(home)).toBe(false);
  });

  it('a command that creates something creates the home, without the warning', async () => {
    const run = await runAgent(['cron', 'create', 'every 1h', 'Report', '--deliver', 'local', '--no-tick'], { home });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(existsSync(home)).toBe(true);
  });
});
