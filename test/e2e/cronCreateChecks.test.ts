import { existsSync } from 'node:fs';
import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { eventually } from '../support/processLiveness.js';
import {
  AGENT_EXECUTABLE,
  errorSentence,
  inAScratchHomeEachTest,
  jobsFileOf,
  outcomeOf,
  runAgent,
  storedJobs,
  writeHomeFile,
} from './agentCli.js';
import { localModelLines } from './configLines.js';
import { spawn } from '../support/testProcesses.js';

/** What `agent cron create` and `edit` check when a job is made or changed, through the built executable. */
describe('agent cron create and edit check the job as it is made', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const agent = (...args: string[]) => runAgent(['cron', ...args, '--no-tick'], { home });

  describe('mistakes that show only when the job runs', () => {
    const slackOnly = { SLACK_BOT_TOKEN: 'xoxb-test' };

    it('create warns on stderr about a platform that is not configured and a skill that is not found, and still creates the job', async () => {
      const run = await runAgent(
        ['cron', 'create', 'every 1h', 'Triage the inbox', '--name', 'triage', '--deliver', 'discord', '--skill', 'triage', '--no-tick'],
        { home },
      );

      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Created job [0-9a-f]{12} 'triage': every 1h/);
      expect(run.stderr.split('\n')).toEqual([
        'warning: Delivery platform "discord" is not configured: set platforms.discord.bot_token (or DISCORD_BOT_TOKEN) in config.yaml or the environment.',
        'warning: The skill "triage" was not found: add skills/triage/SKILL.md under the agent home, or runs go on without it.',
        '',
      ]);
      expect(storedJobs(home)).toEqual([expect.objectContaining({ name: 'triage', deliver: 'discord', skills: ['triage'] })]);
    });

    it('create warns about a named channel neither config.yaml nor the channel directory knows', async () => {
      const run = await runAgent(['cron', 'create', 'every 1h', 'Report', '--deliver', 'slack:#nowhere', '--no-tick'], {
        home,
        env: slackOnly,
      });

      expect(run.code).toBe(0);
      expect(run.stderr).toBe(
        'warning: Delivery target "slack:#nowhere" cannot be resolved now: the slack channel "#nowhere" is unknown; run "agent channels list --refresh" to see the channels the bot can post to, or use the channel id.\n',
      );
      expect(storedJobs(home)).toHaveLength(1);
    });

    it('says nothing when the platform, the channel and the skill are there', async () => {
      await writeHomeFile(home, 'skills/triage/SKILL.md', '# Triage\n');
      await writeHomeFile(
        home,
        'config.yaml',
        ['timezone: UTC', 'platforms:', '  slack:', '    channels:', '      ops: C0123ABCDEF', ''].join('\n'),
      );

      const run = await runAgent(['cron', 'create', 'every 1h', 'Report', '--deliver', 'slack:#ops', '--skill', 'triage', '--no-tick'], {
        home,
        env: slackOnly,
      });

      expect(run).toMatchObject({ code: 0, stderr: '' });
    });

    it('edit warns about the job as the edit left it, and still changes it', async () => {
      const created = await runAgent(['cron', 'create', 'every 1h', 'Report', '--name', 'report', '--deliver', 'local', '--no-tick'], {
        home,
      });
      expect(created).toMatchObject({ code: 0, stderr: '' });

      const run = await runAgent(['cron', 'edit', 'report', '--deliver', 'discord:123456789012345678', '--no-tick'], { home });

      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Updated job /);
      expect(run.stderr).toMatch(
        /^warning: Delivery platform "discord" is not configured: set platforms\.discord\.bot_token \(or DISCORD_BOT_TOKEN\)/,
      );
      expect(storedJobs(home)).toEqual([expect.objectContaining({ name: 'report', deliver: 'discord:123456789012345678' })]);
    });

    it('the cronjob tool of agent chat answers with a warnings list, and the job is created', async () => {
      const llm = await FakeLlmServer.start();
      try {
        await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
        llm.reply(
          replies.toolCalls({
            name: 'cronjob',
            arguments: { action: 'create', schedule: 'every 1h', prompt: 'Triage', name: 'triage', deliver: 'discord', skills: ['triage'] },
          }),
          replies.text('Created, with warnings.'),
        );

        const run = await runAgent(['chat', '-q', 'Triage every hour on discord'], { home, env: { TEST_LLM_KEY: 'test-key' } });

        expect(run.code).toBe(0);
        const toolResult = llm.requests[1]!.body.messages.find((message: { role: string }) => message.role === 'tool');
        expect(JSON.parse(toolResult.content)).toMatchObject({
          success: true,
          job: { name: 'triage' },
          warnings: [
            expect.stringMatching(/^Delivery platform "discord" is not configured/),
            expect.stringMatching(/^The skill "triage" was not found/),
          ],
        });
        expect(storedJobs(home)).toEqual([expect.objectContaining({ name: 'triage', deliver: 'discord' })]);
      } finally {
        await llm.close();
      }
    });
  });

  describe('a Slack thread', () => {
    it('is refused at creation when its thread part is not a Slack timestamp, as a usage error, and nothing is written', async () => {
      const run = await agent('create', 'every 1h', 'Post the digest', '--deliver', 'slack:C0123ABCDEF:notats');

      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
      expect(errorSentence(run)).toBe(
        'error: Delivery target "slack:C0123ABCDEF:notats" names the thread "notats", which is not a Slack timestamp; use the ts of the thread\'s first message, such as 1712345678.123456.',
      );
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });

    it('is refused by edit too, leaving the job as it was', async () => {
      const created = await agent('create', 'every 1h', 'Post the digest', '--name', 'digest', '--deliver', 'local');
      expect(created.code).toBe(0);

      const run = await agent('edit', 'digest', '--deliver', 'slack:C0123ABCDEF:12.5.7');

      expect(run.code).toBe(2);
      expect(errorSentence(run)).toMatch(/names the thread "12\.5\.7", which is not a Slack timestamp/);
      const listed = await runAgent(['cron', 'list', '--json', '--no-tick'], { home });
      expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'digest', deliver: 'local' })]);
    });

    it('is taken when it is one', async () => {
      const run = await agent('create', 'every 1h', 'Post the digest', '--deliver', 'slack:C0123ABCDEF:1712345678.123456');

      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Created job [0-9a-f]{12} /);
    });
  });

  describe('on a terminal', () => {
    it('Ctrl-C during the questions exits 130 and writes no job', async () => {
      // script(1) gives the command a terminal; Ctrl-C is typed once the second question is up.
      const terminal = spawn(
        'script',
        ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(AGENT_EXECUTABLE)} cron create --no-tick`, '/dev/null'],
        {
          env: { ...process.env, AGENT_HOME: home, NO_COLOR: '1', NODE_OPTIONS: '' },
        },
      );
      let shown = '';
      terminal.stdout.on('data', (chunk: Buffer) => (shown += chunk.toString()));
      const finished = outcomeOf(terminal);

      expect(await eventually(() => shown.includes('Schedule ('))).toBe(true);
      terminal.stdin.write('every 2h\n');
      expect(await eventually(() => shown.includes('Prompt ('))).toBe(true);
      terminal.stdin.write('\u0003');
      const run = await finished;

      expect(run.code).toBe(130);
      expect(shown).not.toContain('Created job');
      expect(shown).not.toContain('error:');
      expect(existsSync(jobsFileOf(home))).toBe(false);
    });
  });
});
