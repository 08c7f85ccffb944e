import type { SchedulerContext, SchedulerProvider } from '../../../src/application/ports/SchedulerProvider.js';

/** A provider that records what it is told and fires only when the test says so. */
export class FakeSchedulerProvider implements SchedulerProvider {
  readonly name: string;
  readonly changed: string[][] = [];
  context: SchedulerContext | null = null;
  private stopped = true;

  constructor(
    name = 'fake',
    private readonly unusable: string | null = null,
  ) {
    this.name = name;
  }

  get running(): boolean {
    return !this.stopped;
  }

  problem(): string | null {
    return this.unusable;
  }

  async start(context: SchedulerContext): Promise<void> {
    this.context = context;
    this.stopped = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  async jobsChanged(jobIds: readonly string[]): Promise<void> {
    this.changed.push([...jobIds]);
  }

  /** Fires the due jobs through the context's firing path, as a tick would; nothing once stopped. */
  async tick(): Promise<void> {
    if (!this.stopped && this.context) await this.context.fire.due();
  }
}
