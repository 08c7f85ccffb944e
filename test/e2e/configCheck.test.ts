import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import { createJob, errorSentence, makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, writeHomeFile } from './agentCli.js';

function yamlSection(platform: string, settings: Record<string, string>): string {
  return [`  ${platform}:`, ...Object.entries(settings).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`)].join('\n');
}

/** `agent config check` through the real executable: what it prints and its exit code. */
describe('agent config check, end to end', () => {
  let home: string;

  beforeAll(requireBuiltAgent);
  afterEach(async () => {
    await removeAgentHome(home);
  });

  it('exits 0 with a summary line when everything resolves', async () => {
    home = await makeAgentHome();
    await createJob(home, ['every 1h', 'Report', '--deliver', 'local']);

    const run = await runAgent(['config', 'check'], { home });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe('No problems found: config.yaml ok; 1 job checked; credentials not contacted (add --online).\n');
    expect(run.stderr).toBe('');
  });

  it('exits 1 on a misspelt key, naming the file, the key and the key probably meant', async () => {
    home = await makeAgentHome({ timezone: null, extraConfig: 'timezon: Europe/Berlin' });

    const run = await runAgent(['config', 'check'], { home });

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('config.yaml: unknown key "timezon" (did you mean "timezone"?)');
    expect(errorSentence(run)).toMatch(/^error: 1 problem found \(config\.yaml 1 problem; /);
  });

  it('names each job whose provider, skill or target does not resolve, as JSON too', async () => {
    home = await makeAgentHome();
    const provider = await createJob(home, ['every 1h', 'Report', '--deliver', 'local', '--provider', 'openia']);
    const skill = await createJob(home, ['every 1h', 'Triage', '--deliver', 'local', '--skill', 'triage']);
    const target = await createJob(home, ['every 1h', 'Notify', '--deliver', 'slack:#ops']);
    await writeHomeFile(home, 'skills/other/SKILL.md', '# Other');

    const run = await runAgent(['config', 'check', '--json'], { home });

    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { jobs: { jobs: Array<{ id: string; problems: string[] }> }; problems: number };
    const problemsOf = (id: string) => report.jobs.jobs.find((job) => job.id === id)!.problems.join(' ');
    expect(problemsOf(provider)).toContain('openia');
    expect(problemsOf(skill)).toContain('The skill "triage" was not found');
    expect(problemsOf(target)).toContain('slack');
    expect(report.problems).toBe(3);
  });

  it('with --online asks each configured platform who it is: one good, one refusing its token', async () => {
    const telegram = await FakeTelegramServer.start();
    const slack = await FakeSlackServer.start();
    try {
      home = await makeAgentHome({
        extraConfig: [
          'platforms:',
          yamlSection('telegram', telegram.settings),
          yamlSection('slack', { ...slack.settings, bot_token: 'xoxb-refused' }),
        ].join('\n'),
      });

      const run = await runAgent(['config', 'check', '--online'], { home });

      expect(run.code).toBe(1);
      expect(run.stdout).toContain('telegram: ok, signed in as @delivery_bot');
      expect(run.stdout).toMatch(/slack: FAILED, slack refused the credentials \(invalid_auth\); check platforms\.slack\.bot_token/);
      expect(run.stdout).not.toContain('xoxb-refused');
      expect(errorSentence(run)).toContain('1 problem found');
      expect(telegram.delivered).toEqual([]);
    } finally {
      await telegram.close();
      await slack.close();
    }
  });
});
