import type { Argv } from 'yargs';
import type { CliIO } from '../../adapters/cli/CliIO.js';
import { oneOf } from '../../adapters/cli/flagValues.js';
import type { HeldCredentials } from '../../adapters/system/environmentScrub.js';
import { installationDirectory } from '../installationDirectory.js';
import { stopSignal } from './stopSignal.js';

/**
 * `agent gateway`. It stays in composition because it wires the gateway; the gateway's own
 * composition is loaded only when the command runs.
 */
export function registerGatewayCommand(
  cli: Argv,
  options: { env: NodeJS.ProcessEnv; credentials?: HeldCredentials; debug: boolean; io: CliIO },
): void {
  const { env, credentials, debug, io } = options;
  cli.command(
    'gateway',
    'Run the long-running gateway: the cron trigger and, when enabled, the webhook listener',
    (y) =>
      y.option('log-format', {
        choices: ['text', 'json'] as const,
        coerce: oneOf('--log-format', ['text', 'json'] as const),
        default: 'text' as const,
        describe: 'Log as readable text or as JSON lines',
      }),
    async (argv) => {
      // Loaded only for the gateway, so other commands do not pay for winston, express and the rest.
      const { runGateway } = await import('../gateway/runGateway.js');
      const code = await runGateway({
        env,
        credentials,
        logFormat: argv.logFormat,
        debug,
        stopSignal: stopSignal(),
        out: io.stdout,
        installationDir: installationDirectory(import.meta.url),
      });
      process.exitCode = code;
      // A stopped gateway exits: nothing a cancelled run left behind may keep it alive.
      setTimeout(() => process.exit(code), 2000).unref();
    },
  );
}
