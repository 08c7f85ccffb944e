import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AGENT_EXECUTABLE, errorSentence, inAScratchHomeEachTest, jobsFileOf, outcomeOf, runAgent } from './agentCli.js';
import { eventually } from '../helpers/processLiveness.js';

/** What `agent cron create` and `edit` check when a job is made or changed, through the built executable. */
describe('agent cron create and edit check the job as it is made', () => {
  let home: string;

  inAScratchHomeEachTest((fresh) => (home = fresh));

  const agent = (...args: string[]) => runAgent(['cron', ...args, '--no-tick'], { home });

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
      const terminal = spawn('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(AGENT_EXECUTABLE)} cron create --no-tick`, '/dev/null'], {
        env: { ...process.env, AGENT_HOME: home, NO_COLOR: '1', NODE_OPTIONS: '' },
      });
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
