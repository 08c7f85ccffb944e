import yargs from 'yargs';
import { registerChatCommand, type ChatHomeChoice } from '../../../src/adapters/cli/chatCommands.js';
import { eventually } from '../../support/processLiveness.js';
import { cronHarness } from '../../support/cronHarness.js';
import { fakeTerminal } from '../../support/fakeTerminal.js';

/** `agent chat` driven in-process: a CliIO whose stdin the test types into, use cases on fakes. */
function chat(args: string[], interactive = true) {
  const h = cronHarness();
  const { io, stdin, stdout, stderr } = fakeTerminal(interactive);
  const choices: ChatHomeChoice[] = [];
  const cli = yargs(['chat', ...args])
    .strict()
    .fail((message, error) => {
      throw error ?? new Error(message);
    });
  registerChatCommand(
    cli,
    async (choice) => {
      choices.push(choice);
      return h;
    },
    io,
  );
  return { h, stdin, choices, run: () => cli.parseAsync(), stdout, stderr };
}

describe('agent chat', () => {
  it('answers one question with -q and prints the answer', async () => {
    const session = chat(['-q', 'What is due today?'], false);
    session.h.agent.reply('Nothing is due.');

    await session.run();

    expect(session.stdout()).toBe('Nothing is due.\n');
    expect(session.h.agent.requests[0]!.context.task).toBe('What is due today?');
  });

  it('fires due jobs before answering, reporting them on stderr', async () => {
    const session = chat(['-q', 'hi'], false);
    await session.h.createJob.execute({ schedule: '1m', prompt: 'Ping', name: 'ping' });
    session.h.clock.advance(60_000);

    await session.run();

    expect(session.stderr()).toMatch(/Ran job \w+ 'ping': ok/);
    expect(session.h.agent.requests).toHaveLength(2);
  });

  it('passes the profile choice on', async () => {
    const session = chat(['--profile', 'work', '--create-if-missing', '-q', 'hi'], false);

    await session.run();

    expect(session.choices).toEqual([{ profile: 'work', createIfMissing: true }]);
  });

  it('keeps the conversation across turns on a terminal and ends on /exit', async () => {
    const session = chat(['--no-tick']);
    session.h.agent.reply('First answer.', 'Second answer.');
    const done = session.run();

    expect(await eventually(() => session.stdout().includes('you> '))).toBe(true);
    session.stdin.write('first question\n');
    expect(await eventually(() => session.stdout().includes('First answer.'))).toBe(true);
    session.stdin.write('second question\n');
    expect(await eventually(() => session.stdout().includes('Second answer.'))).toBe(true);
    session.stdin.write('/exit\n');
    await done;

    const second = session.h.agent.requests[1]!;
    expect(second.conversation).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'First answer.' },
    ]);
    expect(second.toolsets).toContain('agent-chat');
  });

  it('shows a failed turn and carries on', async () => {
    const session = chat(['--no-tick']);
    session.h.agent.configured = false;
    const done = session.run();

    expect(await eventually(() => session.stdout().includes('you> '))).toBe(true);
    session.stdin.write('hello\n');
    expect(await eventually(() => session.stderr().includes('No model is configured'))).toBe(true);
    session.stdin.end();
    await done;
  });

  it('owns the bot-chat mailbox while a conversation is open: shows a delivery, runs it as a turn, settles it', async () => {
    const session = chat(['--no-tick']);
    session.h.agent.reply('Typed answer.', 'Reviewed the build.');
    const done = session.run();
    expect(await eventually(() => session.stdout().includes('you> '))).toBe(true);
    session.stdin.write('typed question\n');
    expect(await eventually(() => session.stdout().includes('Typed answer.'))).toBe(true);

    session.h.botChatOwner.queue({ receipt: 'r1', jobName: 'Build watch', message: '[Cronjob "Build watch" output: …]\n\nBuild is red.' });

    expect(await eventually(() => session.h.botChatOwner.settled.has('r1'))).toBe(true);
    expect(session.stdout()).toContain('Build is red.');
    expect(session.h.botChatOwner.settled.get('r1')).toBeNull();
    const delivered = session.h.agent.requests[1]!;
    expect(delivered.context.task).toBe('[Cronjob "Build watch" output: …]\n\nBuild is red.');
    expect(delivered.conversation).toEqual([
      { role: 'user', content: 'typed question' },
      { role: 'assistant', content: 'Typed answer.' },
    ]);
    session.stdin.write('/exit\n');
    await done;
    expect(session.h.botChatOwner.registered).toBe(false);
  });

  it('settles a delivered turn that failed as failed', async () => {
    const session = chat(['--no-tick']);
    session.h.agent.configured = false;
    const done = session.run();
    expect(await eventually(() => session.stdout().includes('you> '))).toBe(true);

    session.h.botChatOwner.queue({ receipt: 'r2', jobName: 'Build watch', message: 'hello' });

    expect(await eventually(() => session.h.botChatOwner.settled.has('r2'))).toBe(true);
    expect(session.h.botChatOwner.settled.get('r2')).toContain('No model is configured');
    session.stdin.end();
    await done;
  });

  it('does not take the mailbox for a one-shot question', async () => {
    const session = chat(['-q', 'hi'], false);

    await session.run();

    expect(session.h.botChatOwner.claimed).toEqual([]);
    expect(session.h.botChatOwner.registered).toBe(false);
  });

  it('refuses a conversation without a terminal', async () => {
    const session = chat([], false);

    await expect(session.run()).rejects.toMatchObject({ code: 'CLI.USAGE' });
  });
});
