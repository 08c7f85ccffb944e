import yargs from 'yargs';
import type { CronApp } from '../../../src/adapters/cli/cronApp.js';
import { registerCronCommands } from '../../../src/adapters/cli/cronCommands.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { SCHEDULE_FORMS, spellingsOf } from '../../../src/domain/Schedule.js';
import { cronHarness } from '../../support/cronHarness.js';
import { fakeTerminal } from '../../support/fakeTerminal.js';

/** What `agent cron create --help` prints, from the CLI adapter driven in-process on fakes. */
async function createHelp(): Promise<string> {
  const h = cronHarness();
  const app: CronApp = { ...h, paths: agentPathsFor('/nonexistent/agent-home') };
  const cli = yargs().exitProcess(false).wrap(null);
  registerCronCommands(
    cli,
    async () => app,
    fakeTerminal().io,
    () => Promise.reject(new Error('agent cron status is not used here')),
  );
  return new Promise((resolve, reject) => {
    void cli.parseAsync(['cron', 'create', '--help'], {}, (error, _argv, output) => (error ? reject(error) : resolve(output)));
  });
}

describe('agent cron create --help', () => {
  it('names every spelling of every schedule form of the table', async () => {
    const help = await createHelp();

    expect(help).toContain('Create a job');
    for (const spelling of SCHEDULE_FORMS.flatMap(spellingsOf)) expect(help).toContain(`"${spelling}"`);
  });
});
