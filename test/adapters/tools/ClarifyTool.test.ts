import 'reflect-metadata';
import { ClarifyTool } from '../../../src/adapters/tools/ClarifyTool.js';
import { ToolInputError } from '../../../src/application/agent/ports/Tool.js';

const signal = new AbortController().signal;

describe('ClarifyTool', () => {
  it('tells an unattended run that nobody can answer, to decide and say what it assumed', async () => {
    const answer = await new ClarifyTool().call({ question: 'Which repository?' }, { signal, unattended: true });

    expect(answer).toMatch(/Nobody can answer questions in this run/);
    expect(answer).toMatch(/Decide for yourself/);
    expect(answer).toMatch(/say in your answer what you assumed/);
    expect(answer).toContain('Which repository?');
  });

  it('tells an interactive session to ask the user in its reply', async () => {
    const answer = await new ClarifyTool().call({ question: 'Which repository?' }, { signal, unattended: false });

    expect(answer).toMatch(/^Ask the user directly in your reply/);
    expect(answer).toContain('Which repository?');
  });

  it('needs a question', async () => {
    await expect(new ClarifyTool().call({}, { signal, unattended: true })).rejects.toThrow(ToolInputError);
  });
});
