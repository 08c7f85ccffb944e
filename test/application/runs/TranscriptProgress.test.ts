import { TranscriptProgress } from '../../../src/application/runs/TranscriptProgress.js';
import type { RunTranscript } from '../../../src/domain/runs/RunTranscript.js';

/** A transcript of `n` tool calls (only its length matters here). */
const entries = (n: number) => Array.from({ length: n }, () => ({ type: 'tool_call' })) as unknown as RunTranscript;

/** A save that waits until released, recording the lengths it was given. */
function slowSaves() {
  const saved: number[] = [];
  const waiting: Array<() => void> = [];
  const save = (transcript: RunTranscript) =>
    new Promise<void>((resolve) => {
      saved.push(transcript.length);
      waiting.push(resolve);
    });
  const releaseAll = async () => {
    while (waiting.length > 0) {
      waiting.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { saved, save, releaseAll };
}

describe('TranscriptProgress', () => {
  it('saves each state after the one before, and passes over the states that came meanwhile for the newest', async () => {
    const saves = slowSaves();
    const progress = new TranscriptProgress(saves.save);

    progress.grew(entries(1));
    progress.grew(entries(2));
    progress.grew(entries(3));
    await saves.releaseAll();

    expect(saves.saved).toEqual([1, 3]);
  });

  it('saves the final transcript last, after a save under way, and nothing after it', async () => {
    const saves = slowSaves();
    const progress = new TranscriptProgress(saves.save);
    progress.grew(entries(1));
    progress.grew(entries(2));

    const ended = progress.final(entries(4));
    progress.grew(entries(5));
    await saves.releaseAll();
    await ended;

    expect(saves.saved).toEqual([1, 4]);
  });

  it('saves nothing at the end of a run that kept no transcript', async () => {
    const saves = slowSaves();
    await new TranscriptProgress(saves.save).final(undefined);
    expect(saves.saved).toEqual([]);
  });

  it('goes on after a save that failed', async () => {
    const saved: number[] = [];
    const progress = new TranscriptProgress(async (transcript) => {
      saved.push(transcript.length);
      if (transcript.length === 1) throw new Error('disk full');
    });
    progress.grew(entries(1));
    await progress.final(entries(2));
    expect(saved).toEqual([1, 2]);
  });
});
