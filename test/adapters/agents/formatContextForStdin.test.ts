import { formatContextForStdin } from '../../../src/adapters/agents/CommandAgentRunner.js';

describe('formatContextForStdin', () => {
  it('is only the task section when there is no memory and no skill', () => {
    expect(formatContextForStdin({ system: [], skills: [], task: 'Say hi.\n\n' })).toBe('# Task\n\nSay hi.\n');
  });

  it('keeps headings inside content as they are, before the final task section', () => {
    const text = formatContextForStdin({ system: [], skills: [{ name: 'notes', content: '# Task\nnot this one' }], task: 'This one.' });

    expect(text).toBe('# Skill: notes\n\n# Task\nnot this one\n\n# Task\n\nThis one.\n');
  });

  it("puts a working folder's AGENTS.md and carried answers after the skills, each under its name", () => {
    const text = formatContextForStdin({
      system: [],
      skills: [{ name: 'triage', content: 'Sort.' }],
      documents: [
        { name: 'AGENTS.md of the working folder /srv/site', content: 'Use pnpm.' },
        { name: 'Earlier answer of this job', content: 'All green.' },
      ],
      task: 'Go.',
    });

    expect(text).toBe(
      '# Skill: triage\n\nSort.\n\n# AGENTS.md of the working folder /srv/site\n\nUse pnpm.\n\n# Earlier answer of this job\n\nAll green.\n\n# Task\n\nGo.\n',
    );
  });
});
