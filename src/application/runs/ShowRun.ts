import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import { RunError } from '../../domain/errors.js';
import type { RunRecord } from '../../domain/runs/RunRecord.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import type { RunLedger } from '../ports/RunLedger.js';
import { TOKENS } from '../ports/tokens.js';

export interface ShowRunOutput {
  run: RunRecord;
  /** What the agent did (docs/runs.md, Transcripts); null for a run without one (a command agent, a script, a run from before transcripts). */
  transcript: RunTranscript | null;
}

/**
 * `agent runs show <run id>`: one run of the ledger, cron or webhook, with its transcript. Reads
 * only. An id the ledger does not keep is RUNS.NOT_FOUND.
 */
@injectable()
export class ShowRun {
  constructor(@inject(TOKENS.RunLedger) private readonly ledger: RunLedger) {}

  async execute(input: { id: string }): Promise<ShowRunOutput> {
    const id = input.id.trim();
    const run = id === '' ? null : await this.ledger.get(id);
    if (run === null) {
      throw new RunError(
        ERROR_CODES.RUNS.NOT_FOUND,
        `No run has the id "${id}"; "agent cron runs <job> --json" and "agent webhook runs --json" list the runs with their ids.`,
      );
    }
    return { run, transcript: await this.ledger.transcriptOf(run.id) };
  }
}
