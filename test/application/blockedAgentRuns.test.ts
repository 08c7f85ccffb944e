import { AgentRunBlockedError } from '../../src/application/ports/AgentRunner.js';
import { cronHarness } from '../support/cronHarness.js';

/** A run whose configuration cannot serve it once started (an MCP server its toolsets name does not start). */
describe('a cron run the agent refuses as blocked by the configuration', () => {
  it('is blocked_config with the sentence, spends no run, and sends the failure notice', async () => {
    const h = cronHarness({ platforms: ['telegram'] });
    const sentence = 'The MCP server "files" could not be started or did not list its tools: it exited.';
    h.agent.reply(new AgentRunBlockedError(sentence));
    const job = await h.createJob.execute({ schedule: 'every 1h', prompt: 'Read the notes', name: 'Notes', deliver: 'telegram:1' });
    h.clock.advance(61 * 60_000);

    await h.runDueJobs.execute();

    expect(h.repository.get(job.id)).toMatchObject({ last_status: 'blocked_config', last_error: sentence, repeat: { completed: 0 } });
    expect(h.channel.sent.map((sent) => sent.text)).toEqual([`⚠️ Cron job 'Notes' failed: ${sentence}`]);
  });
});
