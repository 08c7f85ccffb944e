import type { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import type { Logger } from '../../application/ports/Logger.js';
import { errorText } from '../../domain/errors.js';

/** How often the channel directory is rebuilt from the platforms. */
export const CHANNEL_REFRESH_MS = 5 * 60_000;

/**
 * Builds the channel directory now, in the background (start-up does not wait for the platforms),
 * and again every 5 minutes. A refresh that fails is logged by the use case; the next one tries again.
 */
export function refreshChannelsPeriodically(refresh: RefreshChannelDirectory, logger: Logger): () => void {
  const run = () =>
    void refresh.execute().catch((error: unknown) => logger.warn(`could not refresh the channel directory: ${errorText(error)}`));
  run();
  const timer = setInterval(run, CHANNEL_REFRESH_MS);
  timer.unref();
  return () => clearInterval(timer);
}
