import { FakeLlmServer, replies } from '../support/fakeLlmServer.js';
import { makeAgentHome, removeAgentHome, requireBuiltAgent, runAgent, storedJobs, writeHomeFile } from './agentCli.js';
import { localModelLines } from './configLines.js';

/**
 * The real executable against a local server speaking the OpenAI wire format, through the real
 * SDK: the model's tool calls reach the job use cases in a chat, and never in a cron run.
 */
describe('agent sessions with tools, end to end', () => {
  let home: string;
  let llm: FakeLlmServer;
  const env = { TEST_LLM_KEY: 'test-key' };

  beforeAll(requireBuiltAgent);

  beforeEach(async () => {
    llm = await FakeLlmServer.start();
    home = await makeAgentHome();
    await writeHomeFile(home, 'config.yaml', ['timezone: UTC', ...localModelLines(llm), ''].join('\n'));
  });

  afterEach(async () => {
    await llm.close();
    await removeAgentHome(home);
  });

  const offeredTools = (index: number): string[] =>
    (llm.requests[index]!.body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name);

  it('lets the model create a job with the cronjob tool in agent chat', async () => {
    llm.reply(
      replies.toolCalls({
        name: 'cronjob',
        arguments: { action: 'create', schedule: 'every 1h', prompt: 'Check the build and report failures', name: 'build-check' },
      }),
      replies.text('I created the job ', 'build-check.'),
    );

    const run = await runAgent(['chat', '-q', 'Check the build every hour'], { home, env });

    expect(run).toMatchObject({ code: 0, stdout: 'I created the job build-check.\n' });
    expect(offeredTools(0)).toContain('cronjob');
    expect(storedJobs(home)).toEqual([
      expect.objectContaining({ name: 'build-check', prompt: 'Check the build and report failures', state: 'scheduled' }),
    ]);
    const toolResult = llm.requests[1]!.body.messages.find((message: { role: string }) => message.role === 'tool');
    expect(JSON.parse(toolResult.content)).toMatchObject({ success: true, job: { name: 'build-check' } });
  });

  it('does not offer the cronjob tool to a cron run', async () => {
    const created = await runAgent(
      ['cron', 'create', 'every 1h', 'Report the weather', '--name', 'weather', '--deliver', 'local', '--no-tick'],
      { home, env },
    );
    llm.reply(replies.text('Sunny.'));

    const run = await runAgent(['cron', 'run', 'weather', '--no-tick'], { home, env });

    expect(created.code).toBe(0);
    expect(run.code).toBe(0);
    expect(offeredTools(0)).not.toContain('cronjob');
    expect(offeredTools(0)).toEqual(expect.arrayContaining(['terminal', 'clarify']));
    expect(storedJobs(home)[0]).toMatchObject({ last_status: 'ok' });
  });

  it.each([
    ['clarify', (n: number) => ({ name: 'clarify', arguments: { question: `question ${n}?` } })],
    ['terminal', (n: number) => ({ name: 'terminal', arguments: { command: `echo step ${n}` } })],
  ])(
    'a cron run making 30 %s calls, one or several per turn, prints no MaxListenersExceededWarning',
    async (_tool, toolCall) => {
      const created = await runAgent(
        ['cron', 'create', 'every 1h', 'Think it through', '--name', 'thinker', '--deliver', 'local', '--no-tick'],
        { home, env },
      );
      // 20 turns of one call, then 2 of five: 22 model calls and 30 tool calls, within the 25 rounds.
      for (let n = 1; n <= 20; n += 1) llm.reply(replies.toolCalls(toolCall(n)));
      for (const first of [21, 26]) llm.reply(replies.toolCalls(...[0, 1, 2, 3, 4].map((offset) => toolCall(first + offset))));
      llm.reply(replies.text('Decided.'));

      const run = await runAgent(['cron', 'run', 'thinker', '--no-tick'], { home, env });

      expect(created.code).toBe(0);
      expect(run.code).toBe(0);
      expect(llm.requests).toHaveLength(23);
      expect(llm.requests[22]!.body.messages.filter((message: { role: string }) => message.role === 'tool')).toHaveLength(30);
      expect(storedJobs(home)[0]).toMatchObject({ last_status: 'ok' });
      expect(run.stderr).not.toContain('MaxListenersExceededWarning');
    },
    120_000,
  );

  it('does not offer the cronjob tool to agent chat started from inside a cron run', async () => {
    llm.reply(replies.text('No tools for jobs here.'));

    const run = await runAgent(['chat', '-q', 'Make me a job', '--no-tick'], { home, env: { ...env, AGENT_CRON_RUN: 'deadbeef0000' } });

    expect(run.code).toBe(0);
    expect(offeredTools(0)).not.toContain('cronjob');
    expect(offeredTools(0)).toEqual(expect.arrayContaining(['terminal', 'clarify']));
    expect(storedJobs(home)).toEqual([]);
  });
});
