import type { RunTranscript } from '../../domain/runs/RunTranscript.js';

/**
 * A run's transcript saved as it grows (docs/runs.md, Transcripts), so that the dashboard's page
 * of a running run shows each model turn and tool call once it ends: each new state is saved
 * after the one before, never two at once, and states that came while one was being saved are
 * passed over for the newest. `final` waits for any save under way, then saves the last state,
 * so that a slower earlier save never lands after it.
 */
export class TranscriptProgress {
  private newest: RunTranscript | null = null;
  private saving: Promise<void> | null = null;
  private ended = false;

  constructor(private readonly save: (transcript: RunTranscript) => Promise<unknown>) {}

  /** The transcript as it stands now (a copy the caller does not change). */
  readonly grew = (transcript: RunTranscript): void => {
    if (this.ended) return;
    this.newest = transcript;
    this.saving ??= this.drain();
  };

  /** Saves `transcript` (when there is one) after every save under way; no save follows it. */
  async final(transcript: RunTranscript | undefined): Promise<void> {
    this.ended = true;
    this.newest = null;
    await this.saving;
    if (transcript) await this.save(transcript);
  }

  private async drain(): Promise<void> {
    while (this.newest !== null) {
      const next = this.newest;
      this.newest = null;
      await this.save(next).catch(() => undefined);
    }
    this.saving = null;
  }
}
