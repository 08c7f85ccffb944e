import { cronHarness } from '../support/cronHarness.js';

describe('asking the agent in a chat', () => {
  it('gives memory, the earlier turns and the question, with the job tool available', async () => {
    const h = cronHarness();
    h.memory.documents.push({ name: 'USER.md', content: 'Prefers short answers.' });
    h.agent.reply('Sure.');

    const output = await h.askAgent.execute({
      question: 'Remind me daily at 9',
      conversation: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    });

    expect(output).toEqual({ answer: 'Sure.', answeredBy: 'fake' });
    const [request] = h.agent.requests;
    expect(request!.context).toEqual({
      system: [{ name: 'USER.md', content: 'Prefers short answers.' }],
      skills: [],
      task: 'Remind me daily at 9',
    });
    expect(request!.conversation).toHaveLength(2);
    expect(request!.toolsets).toEqual(['agent-chat']);
    expect(request!.unattended).toBe(false);
  });

  it('refuses before spending anything when no model can run', async () => {
    const h = cronHarness();
    h.agent.configured = false;

    await expect(h.askAgent.execute({ question: 'hi' })).rejects.toMatchObject({ code: 'CHAT.NOT_CONFIGURED' });
    expect(h.agent.requests).toHaveLength(0);
  });

  it('refuses an empty question', async () => {
    const h = cronHarness();

    await expect(h.askAgent.execute({ question: '  ' })).rejects.toMatchObject({ code: 'CHAT.EMPTY_QUESTION' });
  });
});
