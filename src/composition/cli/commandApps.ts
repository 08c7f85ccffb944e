import { AskAgent } from '../../application/chat/AskAgent.js';
import { CancelJobRun } from '../../application/cron/CancelJobRun.js';
import { CreateJob } from '../../application/cron/CreateJob.js';
import { EditJob } from '../../application/cron/EditJob.js';
import { JobWarnings } from '../../application/cron/JobWarnings.js';
import { ListJobRuns } from '../../application/cron/ListJobRuns.js';
import { ListJobs } from '../../application/cron/ListJobs.js';
import { PauseJob } from '../../application/cron/PauseJob.js';
import { RedeliverJobRun } from '../../application/cron/RedeliverJobRun.js';
import { RemoveJob } from '../../application/cron/RemoveJob.js';
import { ResumeJob } from '../../application/cron/ResumeJob.js';
import { RunDueJobs } from '../../application/cron/RunDueJobs.js';
import { RunJobNow } from '../../application/cron/RunJobNow.js';
import { ShowJob } from '../../application/cron/ShowJob.js';
import { ListChannels } from '../../application/delivery/ListChannels.js';
import { ListPlatforms } from '../../application/delivery/ListPlatforms.js';
import { RefreshChannelDirectory } from '../../application/delivery/RefreshChannelDirectory.js';
import { SendMessage } from '../../application/delivery/SendMessage.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { RUNTIME_TOKENS } from '../../application/agent/ports/tokens.js';
import { ShowStatus } from '../../application/status/ShowStatus.js';
import { ListWebhookRuns } from '../../application/webhook/ListWebhookRuns.js';
import { RedeliverWebhookRun } from '../../application/webhook/RedeliverWebhookRun.js';
import { ListWebhooks } from '../../application/webhook/subscriptions/ListWebhooks.js';
import { RemoveWebhookSubscription } from '../../application/webhook/subscriptions/RemoveWebhookSubscription.js';
import { SubscribeWebhook } from '../../application/webhook/subscriptions/SubscribeWebhook.js';
import { TestWebhookSubscription } from '../../application/webhook/subscriptions/TestWebhookSubscription.js';
import type { ChatApp, ChatHomeChoice } from '../../adapters/cli/chatCommands.js';
import type { CliIO } from '../../adapters/cli/CliIO.js';
import type { ConfigCheckApp } from '../../adapters/cli/configCommands.js';
import type { CronApp } from '../../adapters/cli/cronApp.js';
import type { DeliveryApp } from '../../adapters/cli/deliveryCommands.js';
import type { StatusApp } from '../../adapters/cli/statusCommand.js';
import type { DbApp } from '../../adapters/cli/dbCommands.js';
import type { McpApp } from '../../adapters/cli/mcpCommands.js';
import type { WebhookApp } from '../../adapters/cli/webhookCommands.js';
import type { RunsApp } from '../../adapters/cli/runsCommands.js';
import type { EventsApp } from '../../adapters/cli/eventsCommands.js';
import { ListFailedEvents } from '../../application/events/ListFailedEvents.js';
import { ResendFailedEvents } from '../../application/events/ResendFailedEvents.js';
import { TestEventSubscription } from '../../application/events/TestEventSubscription.js';
import { ShowRun } from '../../application/runs/ShowRun.js';
import { CONFIG_TOKENS } from '../../adapters/config/tokens.js';
import { displayPath } from '../../adapters/shared/displayPath.js';
import { webhookListenerEnabled } from '../../adapters/config/webhookSettings.js';
import { ConsoleLogger } from '../../adapters/logging/ConsoleLogger.js';
import { agentHomeFrom } from '../../adapters/persistence/agentPaths.js';
import { profileHome } from '../../adapters/persistence/profiles.js';
import type { HeldCredentials } from '../../adapters/system/environmentScrub.js';
import { watchCancelRequests } from '../cancelRequests.js';
import type { HomeContainers } from './homeContainers.js';

/**
 * Everything the command starts (a run's agent program, script, terminal commands, and what
 * they start) carries this process's mark: killed with -9, the next gateway or command that
 * recovers its job kills what it left running (docs/processes.md).
 */
function markChildren(container: Awaited<ReturnType<HomeContainers['of']>>['container']): void {
  container.get(TOKENS.OrphanProcesses).markChildrenOf(container.get(TOKENS.ProcessIdentity).claimant());
}

/**
 * What each command group of the executable gets, built only when one of its commands runs, from
 * the container of the home it works on (`AGENT_HOME`, or a chat profile's).
 */
export function commandApps(homes: HomeContainers, env: NodeJS.ProcessEnv, io: CliIO, credentials?: HeldCredentials) {
  const cron = async (): Promise<CronApp> => {
    const home = agentHomeFrom(env);
    const { container, settings, paths, database } = await homes.of(home);
    markChildren(container);
    // Each use case is resolved when the command first uses it: building all their object graphs
    // for every command would be a tenth of `agent cron list`'s start-up.
    return {
      settings,
      paths,
      get createJob() {
        return container.get(CreateJob);
      },
      get editJob() {
        return container.get(EditJob);
      },
      get jobWarnings() {
        return container.get(JobWarnings);
      },
      get listJobs() {
        return container.get(ListJobs);
      },
      get pauseJob() {
        return container.get(PauseJob);
      },
      get resumeJob() {
        return container.get(ResumeJob);
      },
      get removeJob() {
        return container.get(RemoveJob);
      },
      get runJobNow() {
        return container.get(RunJobNow);
      },
      get runDueJobs() {
        return container.get(RunDueJobs);
      },
      startFiring: homes.firingIn(home),
      get showJob() {
        return container.get(ShowJob);
      },
      get listJobRuns() {
        return container.get(ListJobRuns);
      },
      get redeliverJobRun() {
        return container.get(RedeliverJobRun);
      },
      get cancelJobRun() {
        return container.get(CancelJobRun);
      },
      watchCancels: () => watchCancelRequests(container, database, paths),
    };
  };
  const chat = async (choice: ChatHomeChoice): Promise<ChatApp> => {
    const base = agentHomeFrom(env);
    const home = choice.profile ? await profileHome(base, choice.profile, choice.createIfMissing) : base;
    const { container } = await homes.of(home);
    markChildren(container);
    return {
      askAgent: container.get(AskAgent),
      runDueJobs: container.get(RunDueJobs),
      startFiring: homes.firingIn(home),
      botChatOwner: container.get(TOKENS.BotChatOwner),
    };
  };
  const webhook = async (): Promise<WebhookApp> => {
    const { container, settings } = await homes.of(agentHomeFrom(env));
    const client = container.get(TOKENS.LocalWebhookClient);
    return {
      subscribeWebhook: container.get(SubscribeWebhook),
      listWebhooks: container.get(ListWebhooks),
      removeWebhookSubscription: container.get(RemoveWebhookSubscription),
      testWebhookSubscription: container.get(TestWebhookSubscription),
      urlOf: (route) => client.urlOf(route),
      listWebhookRuns: container.get(ListWebhookRuns),
      redeliverWebhookRun: container.get(RedeliverWebhookRun),
      timeZone: settings.timeZone,
      listenerEnabled: webhookListenerEnabled(container.get(CONFIG_TOKENS.AgentConfig)),
    };
  };
  const runs = async (): Promise<RunsApp> => {
    const { container, settings } = await homes.of(agentHomeFrom(env));
    return { showRun: container.get(ShowRun), timeZone: settings.timeZone };
  };
  const events = async (): Promise<EventsApp> => {
    const { container, settings } = await homes.of(agentHomeFrom(env));
    return {
      testEventSubscription: container.get(TestEventSubscription),
      listFailedEvents: container.get(ListFailedEvents),
      resendFailedEvents: container.get(ResendFailedEvents),
      timeZone: settings.timeZone,
    };
  };
  const delivery = async (): Promise<DeliveryApp> => {
    const { container } = await homes.of(agentHomeFrom(env));
    return {
      sendMessage: container.get(SendMessage),
      listPlatforms: container.get(ListPlatforms),
      listChannels: container.get(ListChannels),
      refreshChannelDirectory: container.get(RefreshChannelDirectory),
    };
  };
  const config = async (): Promise<ConfigCheckApp> => {
    // Loaded only for this command, like the gateway.
    const { configCheckApp } = await import('./configCheck.js');
    return configCheckApp(agentHomeFrom(env), env, new ConsoleLogger(io.stderr, 'error'), credentials);
  };
  const status = async (): Promise<StatusApp> => {
    const { container, settings, paths } = await homes.of(agentHomeFrom(env));
    return {
      showStatus: container.get(ShowStatus),
      home: paths.home,
      timeZone: settings.timeZone,
      sandbox: () => container.get(TOKENS.Sandbox).status(),
    };
  };
  const db = async (): Promise<DbApp> => {
    const { paths, database, container } = await homes.of(agentHomeFrom(env));
    const [{ DatabaseNotConfiguredError }, { importJobs, importSubscriptions }, { FileJobRepository }, { FileSubscriptionRepository }] =
      await Promise.all([
        import('../../adapters/postgres/jobStoreChoice.js'),
        import('../../application/cron/ImportJobs.js'),
        import('../../adapters/persistence/FileJobRepository.js'),
        import('../../adapters/persistence/FileSubscriptionRepository.js'),
      ]);
    if (!database) throw new DatabaseNotConfiguredError(displayPath(paths.configFile));
    return {
      label: database.label,
      migrate: () => database.migrate(),
      migrations: async () =>
        (await database.migrations()).map((migration) => ({
          version: migration.version,
          name: migration.name,
          applied_at: migration.appliedAt ? migration.appliedAt.toISOString() : null,
        })),
      importHome: async () => ({
        ...(await importJobs(new FileJobRepository(paths), database.repository)),
        subscriptions: await importSubscriptions(
          new FileSubscriptionRepository(paths),
          container.get(TOKENS.WebhookSubscriptionRepository),
        ),
      }),
    };
  };
  const mcp = async (): Promise<McpApp> => {
    const { container } = await homes.of(agentHomeFrom(env));
    const config = container.get(CONFIG_TOKENS.AgentConfig);
    return {
      configured: Object.entries(config.mcp_servers ?? {}).map(([name, server]) => ({
        name,
        transport: server.url === undefined ? 'stdio' : 'http',
        enabled: server.enabled !== false,
      })),
      servers: container.get(RUNTIME_TOKENS.McpServers),
    };
  };
  return { cron, chat, webhook, runs, events, delivery, config, status, db, mcp };
}
