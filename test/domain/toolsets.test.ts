import { cronRunToolsets, toolsInToolsets } from '../../src/domain/toolsets.js';

describe('toolsets', () => {
  it('expands presets and plain toolsets to distinct tools', () => {
    expect(toolsInToolsets(['agent-webhook'])).toEqual(['web_search', 'web_extract', 'vision', 'clarify']);
    expect(toolsInToolsets(['terminal', 'web', 'terminal'])).toEqual(['terminal', 'web_search', 'web_extract']);
  });

  it('gives chat sessions the job tool', () => {
    expect(toolsInToolsets(['agent-chat'])).toContain('cronjob');
  });

  it('never gives a cron run the job tool, even through a preset', () => {
    expect(toolsInToolsets(cronRunToolsets())).not.toContain('cronjob');
    expect(toolsInToolsets(cronRunToolsets(['agent-chat', 'cronjob']))).not.toContain('cronjob');
    expect(toolsInToolsets(cronRunToolsets(['agent-chat']))).toEqual(['terminal', 'web_search', 'web_extract', 'vision', 'clarify']);
  });
});
