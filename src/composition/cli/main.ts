#!/usr/bin/env node
// First: for `agent gateway` a stop signal is heard from the very start (see the module).
import { stopSignal } from './stopSignal.js';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { AskAgent } from '../../application/chat/AskAgent.js';
import { CreateJob } from '../../application/cron/CreateJob.js';
import { EditJob } from '../../application/cron/EditJob.js';
import { ListJobRuns } from '../../application/cron/ListJobRuns.js';
import { ListJobs } from '../../application/cron/ListJobs.js';
import { PauseJob } from '../../application/cron/PauseJob.js';
import { RemoveJob } from '../../application/cron/RemoveJob.js';
import { ResumeJob } from '../../application/cron/ResumeJob.js';
import { RunDueJobs } from '../../application/cron/RunDueJobs.js';
import { RunJobNow } from '../../application/cron/RunJobNow.js';
import { ShowJob } from '../../application/cron/ShowJob.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { ListChannels } from '../../application/delivery/ListChannels.js';
import { ListPlatforms } from '../../application/delivery/ListPlatforms.js';
import { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import { SendMessage } from '../../application/delivery/SendMessage.js';
import { ListWebhookRuns } from '../../application/webhook/ListWebhookRuns.js';
import { ListWebhooks } from '../../application/webhook/ListWebhooks.js';
import { RemoveWebhookSubscription } from '../../application/webhook/RemoveWebhookSubscription.js';
import { SubscribeWebhook } from '../../application/webhook/SubscribeWebhook.js';
import { TestWebhookSubscription } from '../../application/webhook/TestWebhookSubscription.js';
import { systemIO, writeLine } from '../../adapters/cli/CliIO.js';
import { commandLevelOf, MISSING_COMMAND, usageErrorFor } from '../../adapters/cli/commandLevel.js';
import { refuseChangesInsideCronRun } from '../../adapters/cli/cronRunGuard.js';
import { oneOf } from '../../adapters/cli/flagValues.js';
import type { StartCliFiring } from '../../adapters/cli/cliFiring.js';
import { registerChatCommand, type ChatApp, type ChatHomeChoice } from '../../adapters/cli/chatCommands.js';
import { registerCronCommands, type CronApp } from '../../adapters/cli/cronCommands.js';
import { registerDeliveryCommands, type DeliveryApp } from '../../adapters/cli/deliveryCommands.js';
import { registerConfigCommands } from '../../adapters/cli/configCommands.js';
import { registerWebhookCommands, type WebhookApp } from '../../adapters/cli/webhookCommands.js';
import { registerStatusCommand, type StatusApp } from '../../adapters/cli/statusCommand.js';
import { ShowStatus } from '../../application/status/ShowStatus.js';
import { exitCodeFor, messageFor } from '../../adapters/cli/errorReport.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { webhookListenerEnabled } from '../../adapters/config/webhookSettings.js';
import { ConsoleLogger } from '../../adapters/logging/ConsoleLogger.js';
import { agentHomeFrom, agentPathsFor } from '../../adapters/persistence/agentPaths.js';
import { profileHome } from '../../adapters/persistence/profiles.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { buildCronContainer, type CronContainer } from '../cronContainer.js';
import { startFiring } from '../schedulerProviders.js';
import { agentVersion } from './agentVersion.js';
import { installationDirectory } from '../installationDirectory.js';

/** The `agent` executable's composition root. */
async function main(argv: string[]): Promise<number> {
  const env = process.env;
  const io = systemIO(env);
  const debug = argv.includes('--debug');
  const logger = new ConsoleLogger(io.stderr, debug ? 'debug' : 'warn');
  const containers = new Map<string, CronContainer & { paths: AgentPaths }>();
  /** One container per home, built on first use: a command that needs none loads nothing. */
  const containerFor = (home: string) => {
    let built = containers.get(home);
    if (!built) {
      const paths = agentPathsFor(home);
      built = { ...buildCronContainer(paths, env, logger), paths };
      containers.set(home, built);
    }
    return built;
  };
  /**
   * CLI mode fires through the same place as the gateway, with no provider named: due jobs fire
   * only while a command or a session runs, so the built-in ticker fires them (service-spec 5).
   */
  const firingIn =
    (home: string): StartCliFiring =>
    (cadence, fire) => {
      const { container, paths } = containerFor(home);
      return startFiring({
        container,
        config: container.get(CONFIG_TOKENS.AgentConfig),
        env,
        log: logger,
        fire,
        provider: undefined,
        places: { installationDir: installationDirectory(import.meta.url), agentHome: paths.home },
        ticker: cadence,
      });
    };
  const cronApp = async (): Promise<CronApp> => {
    const home = agentHomeFrom(env);
    const { container, settings, paths } = containerFor(home);
    return {
      settings,
      paths,
      createJob: container.get(CreateJob),
      editJob: container.get(EditJob),
      listJobs: container.get(ListJobs),
      pauseJob: container.get(PauseJob),
      resumeJob: container.get(ResumeJob),
      removeJob: container.get(RemoveJob),
      runJobNow: container.get(RunJobNow),
      runDueJobs: container.get(RunDueJobs),
      startFiring: firingIn(home),
      showJob: container.get(ShowJob),
      listJobRuns: container.get(ListJobRuns),
    };
  };
  const chatApp = async (choice: ChatHomeChoice): Promise<ChatApp> => {
    const base = agentHomeFrom(env);
    const home = choice.profile ? await profileHome(base, choice.profile, choice.createIfMissing) : base;
    const { container } = containerFor(home);
    return {
      askAgent: container.get(AskAgent),
      runDueJobs: container.get(RunDueJobs),
      startFiring: firingIn(home),
      botChatOwner: container.get(TOKENS.BotChatOwner),
    };
  };

  const cli = yargs(argv);
  cli
    .scriptName('agent')
    .usage('$0 <command>\n\nRuns saved prompts as fresh agent sessions on a schedule.')
    .option('debug', { type: 'boolean', default: false, describe: 'Show stack traces and debug logs' })
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
    .fail((message, error) => {
      // A command's own failure, or a flag check's one sentence, goes on as it is; yargs' own
      // complaints (its YError, or a bare message) become one sentence about the command concerned.
      if (error && error.name !== 'YError') throw error;
      throw usageErrorFor(message ?? error?.message ?? '', commandLevelOf(cli));
    });
  const webhookApp = async (): Promise<WebhookApp> => {
    const { container, settings } = containerFor(agentHomeFrom(env));
    const client = container.get(TOKENS.LocalWebhookClient);
    return {
      subscribeWebhook: container.get(SubscribeWebhook),
      listWebhooks: container.get(ListWebhooks),
      removeWebhookSubscription: container.get(RemoveWebhookSubscription),
      testWebhookSubscription: container.get(TestWebhookSubscription),
      urlOf: (route) => client.urlOf(route),
      listWebhookRuns: container.get(ListWebhookRuns),
      timeZone: settings.timeZone,
      listenerEnabled: webhookListenerEnabled(container.get(CONFIG_TOKENS.AgentConfig)),
    };
  };
  const deliveryApp = async (): Promise<DeliveryApp> => {
    const { container } = containerFor(agentHomeFrom(env));
    return {
      sendMessage: container.get(SendMessage),
      listPlatforms: container.get(ListPlatforms),
      listChannels: container.get(ListChannels),
      refreshChannelDirectory: container.get(RefreshChannelDirectory),
    };
  };
  registerCronCommands(cli, cronApp, io);
  registerChatCommand(cli, chatApp, io);
  registerWebhookCommands(cli, webhookApp, io);
  registerDeliveryCommands(cli, deliveryApp, io);
  registerConfigCommands(
    cli,
    async () => {
      // Loaded only for this command, like the gateway.
      const { configCheckApp } = await import('./configCheck.js');
      return configCheckApp(agentHomeFrom(env), env, new ConsoleLogger(io.stderr, 'error'));
    },
    io,
  );
  const statusApp = async (): Promise<StatusApp> => {
    const { container, settings, paths } = containerFor(agentHomeFrom(env));
    return { showStatus: container.get(ShowStatus), home: paths.home, timeZone: settings.timeZone };
  };
  registerStatusCommand(cli, statusApp, io);
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

  try {
    await cli.parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    writeLine(io.stderr, messageFor(error, debug));
    return exitCodeFor(error);
  }
}

void main(hideBin(process.argv)).then((code) => {
  process.exitCode = code;
});
