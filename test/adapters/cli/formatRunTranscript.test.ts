import { runShowLines } from '../../../src/adapters/cli/formatRunTranscript.js';
import { aRun, aTranscript } from '../../contract/RunLedger.contract.js';

describe('the human layout of agent runs show', () => {
  it('shows the run, then each model turn and tool call with its time, usage, arguments and result, then the answer', () => {
    const lines = runShowLines({ run: aRun(1), transcript: aTranscript(1) }, 'UTC');

    expect(lines).toEqual([
      'Run run-1',
      '  kind:      cron',
      "  job:       job1 'Morning digest'",
      '  status:    ok',
      '  started:   2026-06-20 08:01:00 (UTC)',
      '  finished:  2026-06-20 08:01:05 (UTC)',
      '  model:     openai/gpt-4o',
      '  delivery:  telegram:-100123: delivered',
      '',
      'Prompt:',
      '  Summarise the news',
      '',
      'Transcript (2 model turns, 1 tool call; times in UTC):',
      '  2026-06-20 08:00:00  model turn, openai (gpt-4o) (1.0 s, 120 tokens in, 8 out)',
      '      calls terminal {"command":"date"}',
      '  2026-06-20 08:00:01  tool terminal (1.0 s)',
      '      arguments: {"command":"date"}',
      '      result:',
      '        run 1: ünïcode ✓',
      '  2026-06-20 08:00:02  model turn, openai (gpt-4o) (1.0 s)',
      '      Digest 1',
      '',
      'Answer:',
      '  Digest 1: ünïcode ✓',
      '  second line',
    ]);
  });

  it('says so when the run kept no transcript', () => {
    expect(runShowLines({ run: aRun(1), transcript: null }, 'UTC')).toContain(
      'No transcript (the run kept none: a command agent, a script, or a run from before transcripts).',
    );
  });
});
