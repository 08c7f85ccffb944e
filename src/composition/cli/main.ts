import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { systemIO, writeLine } from '../../adapters/cli/CliIO.js';
import { commandLevelOf, MISSING_COMMAND, usageErrorFor } from '../../adapters/cli/commandLevel.js';
import { refuseChangesInsideCronRun } from '../../adapters/cli/cronRunGuard.js';
import { sayWhenHomeIsMissing } from '../../adapters/cli/missingHome.js';
import { GLOBAL_TICK_OPTION, warnWhenTickIsIgnored } from '../../adapters/cli/tickFlag.js';
import { agentHomeFrom } from '../../adapters/persistence/agentPaths.js';
import { registerChatCommand } from '../../adapters/cli/chatCommands.js';
import { registerCronCommands } from '../../adapters/cli/cronCommands.js';
import { registerDeliveryCommands } from '../../adapters/cli/deliveryCommands.js';
import { registerConfigCommands } from '../../adapters/cli/configCommands.js';
import { registerWebhookCommands } from '../../adapters/cli/webhookCommands.js';
import { registerStatusCommand } from '../../adapters/cli/statusCommand.js';
import { registerDbCommands } from '../../adapters/cli/dbCommands.js';
import { registerMcpCommands } from '../../adapters/cli/mcpCommands.js';
import { registerRunsCommands } from '../../adapters/cli/runsCommands.js';
import { registerEventsCommands } from '../../adapters/cli/eventsCommands.js';
import { exitCodeFor, messageFor } from '../../adapters/cli/errorReport.js';
import { commandInterruption } from '../../adapters/cli/commandInterruption.js';
import { ConsoleLogger } from '../../adapters/logging/ConsoleLogger.js';
import { withCredentialFiles } from '../../adapters/config/credentialFiles.js';
import { holdCredentials, type HeldCredentials } from '../../adapters/system/environmentScrub.js';
import { isServiceCredential, NO_CHILD_ENVIRONMENT_POLICY } from '../../domain/childEnvironment.js';
import { agentVersion } from './agentVersion.js';
import { commandApps } from './commandApps.js';
import { registerGatewayCommand } from './gatewayCommand.js';
import { HomeContainers } from './homeContainers.js';
import { endTracing } from '../tracing.js';

/** The `agent` executable's composition root. */
async function main(argv: string[]): Promise<number> {
  const io = systemIO(process.env);
  const debug = argv.includes('--debug');
  let credentials: HeldCredentials;
  try {
    // Credentials given as files (TELEGRAM_BOT_TOKEN_FILE …) are read here, once. Then every
    // credential is taken out of this process's environment, where any process of this user
    // could read it (/proc/<pid>/environ), before anything is started (docs/processes.md); the
    // command reads them from `env` alone.
    credentials = holdCredentials(withCredentialFiles(process.env), (name) => isServiceCredential(name, NO_CHILD_ENVIRONMENT_POLICY));
  } catch (error) {
    writeLine(io.stderr, messageFor(error, debug));
    return exitCodeFor(error);
  }
  const env = credentials.environment;
  const homes = new HomeContainers(env, new ConsoleLogger(io.stderr, debug ? 'debug' : 'warn'));
  const apps = commandApps(homes, env, io, credentials);

  const cli = yargs(argv);
  cli
    .scriptName('agent')
    .usage('$0 <command>\n\nRuns saved prompts as fresh agent sessions on a schedule.')
    .option('debug', { type: 'boolean', default: false, describe: 'Show stack traces and debug logs' })
    // Every command takes --no-tick; those that run no due jobs first say they ignore it.
    .option('tick', GLOBAL_TICK_OPTION)
    // Unknown commands are told apart from unknown flags, so that their message can list the commands.
    .strict()
    .strictCommands()
    .demandCommand(1, MISSING_COMMAND)
    .help()
    .alias('help', 'h')
    .version(agentVersion())
    // Laying out help is costly; only do it when help is asked for (docs/adr/0003).
    .wrap(argv.includes('--help') || argv.includes('-h') ? Math.min(100, process.stdout.columns || 100) : null)
    .middleware(refuseChangesInsideCronRun(io))
    .middleware(sayWhenHomeIsMissing(io, () => agentHomeFrom(env)))
    .middleware(warnWhenTickIsIgnored(io, () => commandLevelOf(cli).path))
    .fail((message, error) => {
      // A command's own failure, or a flag check's one sentence, goes on as it is; yargs' own
      // complaints (its YError, or a bare message) become one sentence about the command concerned.
      if (error && error.name !== 'YError') throw error;
      // What was typed lets an unknown flag be told from a stray word, and its "did you mean" keep its --no-.
      throw usageErrorFor(message ?? error?.message ?? '', commandLevelOf(cli), argv);
    });
  skipHelpLaidOutInAdvance(cli);
  registerCronCommands(cli, apps.cron, io, apps.status);
  registerChatCommand(cli, apps.chat, io);
  registerWebhookCommands(cli, apps.webhook, io);
  registerRunsCommands(cli, apps.runs, io);
  registerEventsCommands(cli, apps.events, io);
  registerDeliveryCommands(cli, apps.delivery, io);
  registerConfigCommands(cli, apps.config, io);
  registerStatusCommand(cli, apps.status, io);
  registerDbCommands(cli, apps.db, io);
  registerMcpCommands(cli, apps.mcp, io);
  registerGatewayCommand(cli, { env, credentials, debug, io });

  try {
    // The spans of what the command ran are exported before it exits (docs/traces.md).
    await cli.parseAsync().finally(() => homes.closeMcpServers().finally(endTracing));
    // Stopped by a signal, what the command started has ended and its runs are recorded: the signal's code.
    return commandInterruption.exitCode() ?? (typeof process.exitCode === 'number' ? process.exitCode : 0);
  } catch (error) {
    writeLine(io.stderr, messageFor(error, debug));
    return commandInterruption.exitCode() ?? exitCodeFor(error);
  }
}

/** What yargs keeps inside: the usage of the command being run (not in its published types). */
interface YargsInternals {
  getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } };
}

/**
 * yargs lays out the help of the command it runs as soon as the handler starts, in case the
 * handler fails and help should be shown then. This executable never shows help on a failure
 * (the fail handler above says one sentence), so that layout, a tenth of `agent cron create`'s
 * start-up, is skipped. Should yargs stop having the method, nothing changes.
 */
function skipHelpLaidOutInAdvance(cli: unknown): void {
  const usage = (cli as YargsInternals).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

void main(hideBin(process.argv)).then((code) => {
  process.exitCode = code;
});
