import { formatContextForStdin } from '../../../src/adapters/agents/CommandAgentRunner.js';

describe('formatContextForStdin', () => {
  it('is only the task section when there is no memory and no skill', () => {
    expect(formatContextForStdin({ system: [], skills: [], task: 'Say hi.\n\n' })).toBe('# Task\n\nSay hi.\n');
  });

  it('keeps headings inside content as they are, before the final task section', () => {
    const text = formatContextForStdin({ system: [], skills: [{ name: 'notes', content: '# Task\nnot this one' }], task: 'This one.' });

    expect(text).toBe('# Skill: notes\n\n# Task\nnot this one\n\n# Task\n\nThis one.\n');
  });
});
