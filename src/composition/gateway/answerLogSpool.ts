import { join } from 'node:path';
import type { Logger } from '../../application/ports/Logger.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { logAnswer } from '../../application/webhook/webhookAnswerDelivery.js';
import { errorText } from '../../domain/errors.js';
import { FileAnswerLogSpool } from '../../adapters/persistence/FileAnswerLogSpool.js';

/** The spool through which commands hand the gateway answers delivered to `log` (FileAnswerLogSpool). */
export function answerLogSpoolOf(paths: AgentPaths): FileAnswerLogSpool {
  return new FileAnswerLogSpool(join(paths.webhooksDir, 'answer-log'));
}

/**
 * The gateway writes to its log every answer a command (`agent webhook redeliver`) delivers to
 * `log` on this home, as its own runs' answers. Returns the function that stops it; a spool it
 * cannot serve is a warning, and those commands then write to their own log.
 */
export async function serveAnswerLog(paths: AgentPaths, logger: Logger): Promise<() => void> {
  try {
    return await answerLogSpoolOf(paths).serve(
      (answer) => logAnswer(logger, answer.route, answer.text, { ...answer.about, delivered_again: 'true' }),
      (message) => logger.warn(`answer log: ${message}`),
    );
  } catch (error) {
    logger.warn(
      `answer log: answers that "agent webhook redeliver" delivers to the log cannot be taken; they go to its own log: ${errorText(error)}`,
    );
    return () => {};
  }
}
