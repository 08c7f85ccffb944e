import type { AnswerLog } from '../../application/ports/AnswerLog.js';
import type { GatewayRegistry } from '../../application/ports/GatewayRegistry.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { ProcessIdentity } from '../../application/ports/ProcessIdentity.js';
import { logAnswer } from '../../application/webhook/webhookAnswerDelivery.js';
import { errorText } from '../../domain/errors.js';
import type { FileAnswerLogSpool } from '../persistence/FileAnswerLogSpool.js';

/** How long a command waits for the gateway to take an answer: it takes one within a second. */
const HAND_OVER_MS = 5000;

/**
 * A command's AnswerLog (`agent webhook redeliver`): an answer delivered to `log` goes to the
 * gateway log, handed over through the spool to the gateway that serves this home on this
 * machine. With no such gateway running (or one that does not take it in time) it goes to this
 * command's own log on stderr, in the same entry the gateway would write.
 */
export class GatewayAnswerLog implements AnswerLog {
  constructor(
    private readonly spool: FileAnswerLogSpool,
    private readonly registry: GatewayRegistry,
    private readonly identity: ProcessIdentity,
    /** This command's log at info level: where the entry goes when no gateway takes it. */
    private readonly ownLog: Logger,
  ) {}

  async write(route: string, text: string, about: Record<string, string>): Promise<string> {
    let why = 'no gateway of this home runs on this machine';
    try {
      const gateway = await this.registry.read();
      if (gateway !== null && this.identity.isAlive(`${gateway.host}:${gateway.pid}`) === true) {
        if (await this.spool.handOver({ route, text, about }, HAND_OVER_MS)) return `the gateway log (process ${gateway.pid})`;
        why = `the gateway (process ${gateway.pid}) did not take it within ${HAND_OVER_MS / 1000} s`;
      }
    } catch (error) {
      why = `it could not be handed to the gateway: ${errorText(error)}`;
    }
    logAnswer(this.ownLog, route, text, about);
    return `this command's log (stderr), as ${why}`;
  }
}
