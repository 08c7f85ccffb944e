import type { ServiceIdentifier } from 'inversify';
import type { RunLimits } from '../../domain/PermitPool.js';
import type { AgentRunner } from './AgentRunner.js';
import type { AnswerLog } from './AnswerLog.js';
import type { BotChatDelivery, BotChatOwner } from './BotChatDelivery.js';
import type { ChannelDirectoryStore } from './ChannelDirectory.js';
import type { ChatSettings } from './ChatSettings.js';
import type { Clock } from './Clock.js';
import type { ConversationStore } from './ConversationStore.js';
import type { MemoryStore, SkillLibrary } from './ContextFiles.js';
import type { DeliveryChannel } from './DeliveryChannel.js';
import type { EventOutbox } from './EventOutbox.js';
import type { EventSender } from './EventSender.js';
import type { EventSubscriptions } from './EventSubscriptions.js';
import type { DeliveryLanes } from '../delivery/DeliveryLanes.js';
import type { GatewayRegistry } from './GatewayRegistry.js';
import type { IdGenerator } from './IdGenerator.js';
import type { RandomDraw } from '../../domain/retries.js';
import type { JobControl } from './JobControl.js';
import type { JobRepository } from './JobRepository.js';
import type { LocalWebhookClient } from './LocalWebhookClient.js';
import type { Logger } from './Logger.js';
import type { Metrics } from './Metrics.js';
import type { Platforms } from './Platforms.js';
import type { OrphanProcesses } from './OrphanProcesses.js';
import type { ProcessIdentity } from './ProcessIdentity.js';
import type { ReplicaLeases } from './ReplicaLeases.js';
import type { ProcessTreeKiller } from './ProcessTreeKiller.js';
import type { RepoCommenter } from './RepoCommenter.js';
import type { RunLedger } from './RunLedger.js';
import type { RunOutputStore } from './RunOutputStore.js';
import type { RunTracing } from './RunTracing.js';
import type { Sandbox } from './Sandbox.js';
import type { ScriptExecutor } from './ScriptExecutor.js';
import type { WorkingDirectories } from './WorkingDirectories.js';
import type { SecretGenerator } from './SecretGenerator.js';
import type { AgentPaths, CronSettings, WebhookWorkerSettings } from './Settings.js';
import type { SignatureVerifier } from './SignatureVerifier.js';
import type { TickLock } from './TickLock.js';
import type { UsedFireTokens } from './UsedFireTokens.js';
import type { Timer } from './Timer.js';
import type { WebhookBacklog } from './WebhookBacklog.js';
import type { WebhookInbox } from './WebhookInbox.js';
import type { WebhookListenerSettings } from './WebhookSettings.js';
import type { WebhookRateLimiter } from './WebhookRateLimiter.js';
import type { WebhookRoutes } from './WebhookRoutes.js';
import type { WebhookRunRecords } from './WebhookRunRecords.js';
import type { WebhookSubscriptionRepository } from './WebhookSubscriptionRepository.js';

/** Every injection token, typed so that `container.get` infers the port. */
export const TOKENS = {
  AgentPaths: Symbol.for('agent.AgentPaths') as ServiceIdentifier<AgentPaths>,
  AnswerLog: Symbol.for('agent.AnswerLog') as ServiceIdentifier<AnswerLog>,
  /** Sessions that may hold the job tool where their toolsets grant it: chat, webhook runs. */
  AgentRunner: Symbol.for('agent.AgentRunner') as ServiceIdentifier<AgentRunner>,
  /** The runs of jobs: their sessions never hold the job tool, whatever the toolsets say. */
  JobRunAgentRunner: Symbol.for('agent.JobRunAgentRunner') as ServiceIdentifier<AgentRunner>,
  BotChatDelivery: Symbol.for('agent.BotChatDelivery') as ServiceIdentifier<BotChatDelivery>,
  BotChatOwner: Symbol.for('agent.BotChatOwner') as ServiceIdentifier<BotChatOwner>,
  ChannelDirectoryStore: Symbol.for('agent.ChannelDirectoryStore') as ServiceIdentifier<ChannelDirectoryStore>,
  /** Who may talk to the bot on each platform and how turns are taken (the gateway with inbound chat only). */
  ChatSettings: Symbol.for('agent.ChatSettings') as ServiceIdentifier<ChatSettings>,
  Clock: Symbol.for('agent.Clock') as ServiceIdentifier<Clock>,
  ConversationStore: Symbol.for('agent.ConversationStore') as ServiceIdentifier<ConversationStore>,
  CronSettings: Symbol.for('agent.CronSettings') as ServiceIdentifier<CronSettings>,
  DeliveryChannel: Symbol.for('agent.DeliveryChannel') as ServiceIdentifier<DeliveryChannel>,
  /** The gateway's per-platform delivery lanes, shared by cron runs and webhook runs. */
  DeliveryLanes: Symbol.for('agent.DeliveryLanes') as ServiceIdentifier<DeliveryLanes>,
  GatewayRegistry: Symbol.for('agent.GatewayRegistry') as ServiceIdentifier<GatewayRegistry>,
  IdGenerator: Symbol.for('agent.IdGenerator') as ServiceIdentifier<IdGenerator>,
  /** Draws in [0, 1) for jitter: Math.random in service, a seeded generator in tests. */
  Random: Symbol.for('agent.Random') as ServiceIdentifier<RandomDraw>,
  JobControl: Symbol.for('agent.JobControl') as ServiceIdentifier<JobControl>,
  JobRepository: Symbol.for('agent.JobRepository') as ServiceIdentifier<JobRepository>,
  LocalWebhookClient: Symbol.for('agent.LocalWebhookClient') as ServiceIdentifier<LocalWebhookClient>,
  Logger: Symbol.for('agent.Logger') as ServiceIdentifier<Logger>,
  /** The events out waiting to be sent: in files under `$AGENT_HOME`, or in the database for replicas sharing one. */
  EventOutbox: Symbol.for('agent.EventOutbox') as ServiceIdentifier<EventOutbox>,
  EventSender: Symbol.for('agent.EventSender') as ServiceIdentifier<EventSender>,
  EventSubscriptions: Symbol.for('agent.EventSubscriptions') as ServiceIdentifier<EventSubscriptions>,
  MemoryStore: Symbol.for('agent.MemoryStore') as ServiceIdentifier<MemoryStore>,
  /** Bound only by the gateway with metrics on; the use cases fall back to NO_METRICS. */
  Metrics: Symbol.for('agent.Metrics') as ServiceIdentifier<Metrics>,
  Platforms: Symbol.for('agent.Platforms') as ServiceIdentifier<Platforms>,
  ProcessIdentity: Symbol.for('agent.ProcessIdentity') as ServiceIdentifier<ProcessIdentity>,
  ReplicaLeases: Symbol.for('agent.ReplicaLeases') as ServiceIdentifier<ReplicaLeases>,
  /** Ends a child together with everything it started; chosen by platform. */
  ProcessTreeKiller: Symbol.for('agent.ProcessTreeKiller') as ServiceIdentifier<ProcessTreeKiller>,
  OrphanProcesses: Symbol.for('agent.OrphanProcesses') as ServiceIdentifier<OrphanProcesses>,
  RepoCommenter: Symbol.for('agent.RepoCommenter') as ServiceIdentifier<RepoCommenter>,
  RunOutputStore: Symbol.for('agent.RunOutputStore') as ServiceIdentifier<RunOutputStore>,
  /** Bound only with OTEL_EXPORTER_OTLP_ENDPOINT (or its traces variant) set; the use cases fall back to NO_TRACING. */
  RunTracing: Symbol.for('agent.RunTracing') as ServiceIdentifier<RunTracing>,
  RunLedger: Symbol.for('agent.RunLedger') as ServiceIdentifier<RunLedger>,
  /** Where pre-run scripts, terminal commands and command agent programs run: bubblewrap, or nothing. */
  Sandbox: Symbol.for('agent.Sandbox') as ServiceIdentifier<Sandbox>,
  /** The model sessions and the processes this process runs at once (`agent.max_concurrent_*`). */
  RunLimits: Symbol.for('agent.RunLimits') as ServiceIdentifier<RunLimits>,
  ScriptExecutor: Symbol.for('agent.ScriptExecutor') as ServiceIdentifier<ScriptExecutor>,
  WorkingDirectories: Symbol.for('agent.WorkingDirectories') as ServiceIdentifier<WorkingDirectories>,
  SecretGenerator: Symbol.for('agent.SecretGenerator') as ServiceIdentifier<SecretGenerator>,
  SkillLibrary: Symbol.for('agent.SkillLibrary') as ServiceIdentifier<SkillLibrary>,
  SignatureVerifier: Symbol.for('agent.SignatureVerifier') as ServiceIdentifier<SignatureVerifier>,
  TickLock: Symbol.for('agent.TickLock') as ServiceIdentifier<TickLock>,
  Timer: Symbol.for('agent.Timer') as ServiceIdentifier<Timer>,
  /** The fire tokens already used: in files under `$AGENT_HOME`, or in the database for replicas sharing one. */
  UsedFireTokens: Symbol.for('agent.UsedFireTokens') as ServiceIdentifier<UsedFireTokens>,
  WebhookBacklog: Symbol.for('agent.WebhookBacklog') as ServiceIdentifier<WebhookBacklog>,
  WebhookInbox: Symbol.for('agent.WebhookInbox') as ServiceIdentifier<WebhookInbox>,
  WebhookListenerSettings: Symbol.for('agent.WebhookListenerSettings') as ServiceIdentifier<WebhookListenerSettings>,
  /** The per-route webhook rate limit: in memory for one gateway, in the database for replicas sharing one. */
  WebhookRateLimiter: Symbol.for('agent.WebhookRateLimiter') as ServiceIdentifier<WebhookRateLimiter>,
  WebhookRoutes: Symbol.for('agent.WebhookRoutes') as ServiceIdentifier<WebhookRoutes>,
  WebhookRunRecords: Symbol.for('agent.WebhookRunRecords') as ServiceIdentifier<WebhookRunRecords>,
  WebhookSubscriptionRepository: Symbol.for('agent.WebhookSubscriptionRepository') as ServiceIdentifier<WebhookSubscriptionRepository>,
  WebhookWorkerSettings: Symbol.for('agent.WebhookWorkerSettings') as ServiceIdentifier<WebhookWorkerSettings>,
} as const;
