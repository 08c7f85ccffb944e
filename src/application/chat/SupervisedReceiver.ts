import {
  receiverRetryDelayMs,
  RECEIVER_RETRY_MAX_MS,
  type ChatReceiverState,
  type ChatReceiverStatus,
} from '../../domain/chat/chatReceivers.js';
import type { ConversationKey, InboundMessage } from '../../domain/chat/inboundMessage.js';
import { errorText } from '../../domain/errors.js';
import type { Clock } from '../ports/Clock.js';
import type { InboundChatSource, ReceiverHealth } from '../ports/InboundChat.js';
import type { Logger } from '../ports/Logger.js';
import type { Metrics } from '../ports/Metrics.js';
import type { Timer } from '../ports/Timer.js';

/** What every supervised receiver of a gateway shares. */
export interface SupervisionContext {
  deliver: (message: InboundMessage) => Promise<void>;
  timer: Timer;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** In [0, 1): the jitter of the pauses between tries. */
  random: () => number;
  /** Told each time a receiver's state changes. */
  changed: (status: ChatReceiverStatus) => void;
}

type Attempt = { kind: 'started'; ended: Promise<string> } | { kind: 'failed'; reason: string };

/** An outage: since when (the Timer's time) and how many tries failed in it. */
interface Outage {
  since: number;
  failures: number;
}

/**
 * Keeps one platform's receiver running, apart from every other. A receiver that cannot start,
 * or that stops for good while it runs, is started again (`make` gives the source to start: a
 * new one, or the same where it can start again) after pauses doubling from 1 s up to 60 s,
 * jittered, on the Timer. Each outage is logged twice: one line when it begins, one when the
 * receiver is back. Outages the source rides out itself (a lost connection it reconnects) it logs
 * itself; it reports them through ReceiverHealth, and they show in the state.
 */
export class SupervisedReceiver {
  private current: ChatReceiverStatus;
  private source: InboundChatSource | null = null;
  private run: { abort: AbortController; firstAttempt: Promise<void>; done: Promise<void> } | null = null;

  constructor(
    readonly platform: string,
    private readonly make: () => Promise<InboundChatSource>,
    private readonly context: SupervisionContext,
    initial: Extract<ChatReceiverState, 'starting' | 'standby'> = 'starting',
  ) {
    this.current = { platform, state: initial, since: context.clock.now().toISOString(), error: null };
    context.metrics.chatReceiverUp(platform, false);
  }

  status(): ChatReceiverStatus {
    return { ...this.current };
  }

  /** Starts keeping the receiver running; resolves once the first try ended, however it ended (a failure is tried again in the background). */
  start(): Promise<void> {
    if (this.run) return this.run.firstAttempt;
    const abort = new AbortController();
    let firstAttemptOver: () => void = () => undefined;
    const firstAttempt = new Promise<void>((resolve) => (firstAttemptOver = resolve));
    this.set('starting', null);
    const done = this.keepRunning(abort.signal, firstAttemptOver).finally(firstAttemptOver);
    this.run = { abort, firstAttempt, done };
    return firstAttempt;
  }

  /** Stops the receiver and any try to come; with `standby` (the receiving role went elsewhere), it says so from then on. */
  async stop(then: 'standby' | null = null): Promise<void> {
    const run = this.run;
    this.run = null;
    run?.abort.abort();
    await run?.done;
    if (then) this.set(then, null);
  }

  /** "typing…" through the source running now; nothing when none runs. */
  async typing(conversation: ConversationKey): Promise<void> {
    await this.source?.typing(conversation);
  }

  private async keepRunning(signal: AbortSignal, firstAttemptOver: () => void): Promise<void> {
    const { logger, timer } = this.context;
    let outage: Outage | null = null;
    const stopped = aborted(signal);
    while (!signal.aborted) {
      // A stop does not wait for a try under way (a platform slow to answer): that try cleans up after itself.
      const attempt = await Promise.race([this.attempt(signal), stopped]);
      firstAttemptOver();
      if (signal.aborted || attempt === null) break;
      if (attempt.kind === 'started') {
        if (outage) {
          const seconds = Math.round((timer.monotonicNow() - outage.since) / 1000);
          logger.info(
            `chat: the ${this.platform} receiver is up again after ${seconds} s (${outage.failures} failed attempt${outage.failures === 1 ? '' : 's'})`,
            { platform: this.platform },
          );
        }
        const reason = await Promise.race([attempt.ended, stopped]);
        if (signal.aborted || reason === null) break;
        await this.stopSource();
        outage = { since: timer.monotonicNow(), failures: 1 };
        logger.warn(
          `chat: the ${this.platform} receiver stopped (${withoutFullStop(reason)}); starting it again, at most ${RECEIVER_RETRY_MAX_MS / 1000} s apart`,
          { platform: this.platform },
        );
        this.set('down', reason);
      } else {
        if (outage) {
          outage.failures += 1;
          logger.debug(`chat: the ${this.platform} receiver still cannot start (${withoutFullStop(attempt.reason)})`, {
            platform: this.platform,
            failures: outage.failures,
          });
        } else {
          outage = { since: timer.monotonicNow(), failures: 1 };
          logger.warn(
            `chat: the ${this.platform} receiver cannot start (${withoutFullStop(attempt.reason)}); trying again, at most ${RECEIVER_RETRY_MAX_MS / 1000} s apart`,
            { platform: this.platform },
          );
        }
        this.set('down', attempt.reason);
      }
      await timer.wait(receiverRetryDelayMs(outage.failures, this.context.random()), signal, { background: true });
    }
    await this.stopSource();
  }

  /** Makes a source and starts it; a source's reports count only while it is the one running. */
  private async attempt(signal: AbortSignal): Promise<Attempt> {
    let source: InboundChatSource;
    try {
      source = await this.make();
    } catch (error) {
      return { kind: 'failed', reason: errorText(error) };
    }
    if (signal.aborted) return { kind: 'failed', reason: 'stopped' };
    this.source = source;
    let reported = false;
    let end: (reason: string) => void = () => undefined;
    const ended = new Promise<string>((resolve) => (end = resolve));
    const mine = () => this.source === source && !signal.aborted;
    const health: ReceiverHealth = {
      up: () => {
        if (!mine()) return;
        reported = true;
        this.set('up', null);
      },
      down: (reason) => {
        if (!mine()) return;
        reported = true;
        this.set('down', reason);
      },
      ended: (reason) => {
        if (mine()) end(reason);
      },
    };
    try {
      await source.start(this.context.deliver, health);
    } catch (error) {
      if (this.source === source) this.source = null;
      await source.stop().catch(() => undefined);
      return { kind: 'failed', reason: errorText(error) };
    }
    if (signal.aborted) {
      // Stopped meanwhile: what started late is stopped at once.
      if (this.source === source) this.source = null;
      await source.stop().catch(() => undefined);
      return { kind: 'failed', reason: 'stopped' };
    }
    if (!reported && mine()) this.set('up', null);
    return { kind: 'started', ended };
  }

  private async stopSource(): Promise<void> {
    const source = this.source;
    this.source = null;
    await source?.stop().catch(() => undefined);
  }

  /** A new state from now; the same state with another reason keeps its start. */
  private set(state: ChatReceiverState, error: string | null): void {
    if (this.current.state === state && this.current.error === error) return;
    const since = this.current.state === state ? this.current.since : this.context.clock.now().toISOString();
    this.current = { platform: this.platform, state, since, error };
    this.context.metrics.chatReceiverUp(this.platform, state === 'up');
    this.context.changed(this.status());
  }
}

/** Resolves with null once `signal` aborts. */
function aborted(signal: AbortSignal): Promise<null> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(null);
    else signal.addEventListener('abort', () => resolve(null), { once: true });
  });
}

function withoutFullStop(sentence: string): string {
  return sentence.trim().replace(/\.$/, '');
}
