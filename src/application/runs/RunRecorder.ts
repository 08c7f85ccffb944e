/**
 * The run ledger's side of every run (docs/architecture.md, The run pipeline): a run that ends at
 * once is written once, when it ends; one still going after RUNNING_RECORD_AFTER_MS shows as
 * running until then; the final record is stamped with the time it is written; and a record the
 * ledger cannot take is logged while the run goes on.
 */
import { inject, injectable, optional } from 'inversify';
import { errorText } from '../../domain/errors.js';
import { RUNNING_RECORD_AFTER_MS, type RunRecord } from '../../domain/runs/RunRecord.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { RunTranscript } from '../../domain/runs/RunTranscript.js';
import type { RunLedger, TranscriptOwner } from '../ports/RunLedger.js';
import { NO_TRACING, type RunTracing, type TracedRoot, type TraceHandle } from '../ports/RunTracing.js';
import type { Timer } from '../ports/Timer.js';
import { TOKENS } from '../ports/tokens.js';
import { RunEvents } from '../events/RunEvents.js';
import { TranscriptProgress } from './TranscriptProgress.js';

/** A record written only once its run has gone on for RUNNING_RECORD_AFTER_MS. */
export interface ShownLater {
  /** Without a timer, the record being written at once, for the run to wait for; null otherwise. */
  writtenNow: Promise<void> | null;
  /** The run ended (or moved on): the record is no longer written, and one under way is waited for, so that it comes before the next. */
  stop(reason?: string): Promise<void>;
}

/** Writes the records of runs of every kind to the run ledger. */
@injectable()
export class RunRecorder {
  constructor(
    @inject(TOKENS.RunLedger) private readonly ledger: RunLedger,
    @inject(TOKENS.Logger) private readonly log: Logger,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    /** Without it (tests that build the run path by hand), a run is in the ledger as running from its start. */
    @inject(TOKENS.Timer) @optional() private readonly timer: Timer | null = null,
    /** The events out (docs/events.md) of the runs recorded; without it (tests that build the run path by hand), none. */
    @inject(RunEvents) @optional() private readonly events: RunEvents | null = null,
    /** The runs' traces (docs/traces.md); without them, none. */
    @inject(TOKENS.RunTracing) @optional() private readonly tracing: RunTracing = NO_TRACING,
  ) {}

  /**
   * Starts the trace of a run: its records saved within it carry its id (`trace_id`), as do the
   * log lines made within it. With traces off, a trace that records nothing.
   */
  trace(root: TracedRoot): TraceHandle {
    return this.tracing.start(root);
  }

  /** The id of the trace current now (the run's, within its trace); null when none. */
  traceId(): string | null {
    return this.tracing.currentTraceId();
  }

  /** A run starts: its `run.started` event (the record is written later, see showRunning). */
  async started(running: RunRecord): Promise<void> {
    await this.events?.runStarted(running);
  }

  /**
   * Calls `write` once RUNNING_RECORD_AFTER_MS have passed since the run started (`startsInMs`
   * from now, for a run that starts later), unless stopped before; `write` is given the stop's
   * signal, to check again after a wait of its own. Without a timer, at once.
   */
  later(write: (stopped: AbortSignal) => Promise<unknown>, startsInMs = 0): ShownLater {
    const stop = new AbortController();
    const written = this.timer
      ? this.timer.wait(startsInMs + RUNNING_RECORD_AFTER_MS, stop.signal, { background: true }).then(async () => {
          if (!stop.signal.aborted) await write(stop.signal);
        })
      : write(stop.signal).then(() => undefined);
    return {
      writtenNow: this.timer ? null : written,
      stop: async (reason?: string) => {
        stop.abort(reason ?? 'stopped');
        await written;
      },
    };
  }

  /** Shows `running` in the ledger once the run has gone on for RUNNING_RECORD_AFTER_MS (it starts `startsInMs` from now). */
  showRunning(running: RunRecord, startsInMs = 0): ShownLater {
    return this.later(() => this.save(running), startsInMs);
  }

  /** Saves a record; one the ledger cannot take is logged (false), and the run goes on. */
  async save(saved: RunRecord, about?: Record<string, string>): Promise<boolean> {
    const record = this.stamped(saved);
    const failure = await this.keep(record);
    await this.events?.runSaved(record);
    if (failure === null) return true;
    if (record.kind === 'webhook') {
      this.log.warn(`could not write webhook event ${record.id} to the run ledger: ${failure}`, about ?? { run: record.id });
    } else {
      this.log.warn(`could not write run ${record.id} to the run ledger`, { job: record.subject, error: failure });
    }
    return false;
  }

  /** The final record of a run, built at the time it is written (its `finished_at`), and saved as `save` does. */
  async saveFinal(build: (now: Date) => RunRecord, about?: Record<string, string>): Promise<RunRecord> {
    const record = this.stamped(build(this.clock.now()));
    await this.save(record, about);
    return record;
  }

  /**
   * Saves a record the run depends on (an answer kept before its delivery): the record built at
   * the time it is written, or why the ledger could not take it, for the caller to act on.
   */
  async keepNow(build: (now: Date) => RunRecord): Promise<{ record: RunRecord; failure: string | null }> {
    const record = this.stamped(build(this.clock.now()));
    const failure = await this.keep(record);
    await this.events?.runSaved(record);
    return { record, failure };
  }

  /**
   * Saves a run's transcript (docs/runs.md, Transcripts), before or after its record; one the
   * ledger cannot take is logged (false), and the run goes on.
   */
  async saveTranscript(run: TranscriptOwner, transcript: RunTranscript): Promise<boolean> {
    try {
      await this.ledger.saveTranscript(run, transcript);
      return true;
    } catch (error) {
      this.log.warn(`could not write the transcript of run ${run.id} to the run ledger`, { run: run.id, error: errorText(error) });
      return false;
    }
  }

  /** The record with this id; null when there is none or the ledger cannot be read (logged). */
  async find(id: string): Promise<RunRecord | null> {
    try {
      return await this.ledger.get(id);
    } catch (error) {
      this.log.warn(`could not read run ${id} from the run ledger`, { run: id, error: errorText(error) });
      return null;
    }
  }

  /** Saves the transcript of `run` as it grows, each state after the one before (TranscriptProgress). */
  transcriptProgress(run: TranscriptOwner): TranscriptProgress {
    return new TranscriptProgress((transcript) => this.saveTranscript(run, transcript));
  }

  /** The time a record is stamped with. */
  now(): Date {
    return this.clock.now();
  }

  /** `record` with the id of the trace it is saved in, unless it has one already (a run's records keep their trace's). */
  private stamped(record: RunRecord): RunRecord {
    if (record.trace_id) return record;
    const traceId = this.tracing.currentTraceId();
    return traceId === null ? record : { ...record, trace_id: traceId };
  }

  private async keep(record: RunRecord): Promise<string | null> {
    try {
      await this.ledger.save(record);
      return null;
    } catch (error) {
      return errorText(error);
    }
  }
}
