/**
 * The gateway's start as a list of steps (docs/gateway.md, "Stops when told"): each starts in turn unless a
 * stop was asked for meanwhile (the one stopping guard), and stopping runs the stops of the
 * steps that started, the last started first.
 */

/** A step's stop, and the name a failure of it is logged under. */
interface StartedStep {
  name: string;
  stop: () => Promise<unknown> | unknown;
}

/** Runs start steps and, in reverse, their stops. */
export class StartSteps {
  private readonly started: StartedStep[] = [];
  private stopAsked = false;

  constructor(stopSignal: Promise<unknown>) {
    void stopSignal.then(() => {
      this.stopAsked = true;
    });
  }

  /** Whether a stop was asked for: no step starts any more. */
  get stopping(): boolean {
    return this.stopAsked;
  }

  /**
   * Starts the step `name` unless a stop was asked for (null then); `stop`, given what it
   * started, is run when the gateway stops, before the stops of the steps started earlier.
   */
  async step<T>(name: string, start: () => Promise<T> | T, stop?: (started: T) => Promise<unknown> | unknown): Promise<T | null> {
    if (this.stopAsked) return null;
    const started = await start();
    if (stop) this.started.push({ name, stop: () => stop(started) });
    return started;
  }

  /** A stop run whatever started, before those of the steps started so far (what must end first). */
  atStop(name: string, stop: () => Promise<unknown> | unknown): void {
    this.started.push({ name, stop });
  }

  /** Runs every stop, the last registered first; one that fails is told to `failed`, and the others still run. */
  async stopAll(failed: (name: string, error: unknown) => void): Promise<void> {
    for (const step of this.started.splice(0).reverse()) {
      try {
        await step.stop();
      } catch (error) {
        failed(step.name, error);
      }
    }
  }
}
