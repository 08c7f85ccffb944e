/**
 * The run pipeline built by hand, for tests that give each port a fake: what the composition
 * root wires with inversify, with the same collaborators (docs/architecture.md, The run pipeline).
 */
import { AskAgent } from '../../src/application/chat/AskAgent.js';
import { ChatTurns } from '../../src/application/chat/ChatTurns.js';
import { ConverseInChats } from '../../src/application/chat/ConverseInChats.js';
import { JobAnswers } from '../../src/application/cron/JobAnswers.js';
import { JobExecution } from '../../src/application/cron/JobExecution.js';
import { JobPreflight } from '../../src/application/cron/JobPreflight.js';
import { JobFileChecks } from '../../src/application/cron/JobFileChecks.js';
import { DailyBudgets } from '../../src/application/runs/DailyBudgets.js';
import { JobRunMarks } from '../../src/application/cron/JobRunMarks.js';
import { JobRunReports } from '../../src/application/cron/JobRunReports.js';
import { JobRunSteps } from '../../src/application/cron/JobRunSteps.js';
import { PendingJobDeliveries } from '../../src/application/cron/PendingJobDeliveries.js';
import { RedeliverJobRun } from '../../src/application/cron/RedeliverJobRun.js';
import type { AgentRunner } from '../../src/application/ports/AgentRunner.js';
import type { AnswerLog } from '../../src/application/ports/AnswerLog.js';
import type { BotChatDelivery } from '../../src/application/ports/BotChatDelivery.js';
import type { ChatSettings } from '../../src/application/ports/ChatSettings.js';
import type { Clock } from '../../src/application/ports/Clock.js';
import type { MemoryStore, SkillLibrary } from '../../src/application/ports/ContextFiles.js';
import type { ConversationStore } from '../../src/application/ports/ConversationStore.js';
import type { DeliveryChannel } from '../../src/application/ports/DeliveryChannel.js';
import type { JobRepository } from '../../src/application/ports/JobRepository.js';
import type { Logger } from '../../src/application/ports/Logger.js';
import type { Metrics } from '../../src/application/ports/Metrics.js';
import type { ProcessIdentity } from '../../src/application/ports/ProcessIdentity.js';
import type { RepoCommenter } from '../../src/application/ports/RepoCommenter.js';
import type { RunLedger } from '../../src/application/ports/RunLedger.js';
import type { RunOutputStore } from '../../src/application/ports/RunOutputStore.js';
import type { ScriptExecutor } from '../../src/application/ports/ScriptExecutor.js';
import type { CronSettings, WebhookWorkerSettings } from '../../src/application/ports/Settings.js';
import type { Timer } from '../../src/application/ports/Timer.js';
import type { WebhookRoutes } from '../../src/application/ports/WebhookRoutes.js';
import type { WebhookRunRecords } from '../../src/application/ports/WebhookRunRecords.js';
import { AnswerDelivery } from '../../src/application/runs/AnswerDelivery.js';
import { RedeliveryClaims } from '../../src/application/runs/RedeliveryClaims.js';
import { RunContexts } from '../../src/application/runs/RunContexts.js';
import { RunMeter } from '../../src/application/runs/RunMeter.js';
import { RunRecorder } from '../../src/application/runs/RunRecorder.js';
import { RunStops } from '../../src/application/runs/RunStops.js';
import { RedeliverWebhookRun } from '../../src/application/webhook/RedeliverWebhookRun.js';
import { WebhookAgentStep } from '../../src/application/webhook/WebhookAgentStep.js';
import { WebhookAnswerStep } from '../../src/application/webhook/WebhookAnswerStep.js';
import { WebhookEventExecution } from '../../src/application/webhook/WebhookEventExecution.js';
import { WebhookRunPreparation } from '../../src/application/webhook/WebhookRunPreparation.js';
import { WebhookRunRecorder } from '../../src/application/webhook/WebhookRunRecorder.js';
import { FakeBotChatDelivery } from './fakes/FakeBotChatDelivery.js';
import { FakeWorkingDirectories } from './fakes/FakeWorkingDirectories.js';
import { InMemoryRunLedger } from './fakes/InMemoryRunLedger.js';
import { InMemoryJobRepository } from './fakes/InMemoryJobRepository.js';
import type { WorkingDirectories } from '../../src/application/ports/WorkingDirectories.js';
import { RecordingRepoCommenter } from './fakes/RecordingRepoCommenter.js';

/** What a cron run takes. */
export interface CronRunPorts {
  agent: AgentRunner;
  channel: DeliveryChannel;
  outputs: RunOutputStore;
  memory: MemoryStore;
  skills: SkillLibrary;
  scripts: ScriptExecutor;
  settings: CronSettings;
  log: Logger;
  repository: JobRepository;
  botChat: BotChatDelivery;
  ledger: RunLedger;
  clock: Clock;
  /** Without it, a run is in the ledger as running from its start. */
  timer?: Timer | null;
  /** Job working folders; default: none exists. */
  workdirs?: WorkingDirectories;
  /** The runs' time limits and cancels; default: on `timer`. */
  stops?: RunStops;
}

/** The cron run path and its collaborators. */
export function cronRunPipeline(ports: CronRunPorts) {
  const { agent, channel, outputs, memory, skills, scripts, settings, log, repository, botChat, ledger, clock } = ports;
  const recorder = new RunRecorder(ledger, log, clock, ports.timer ?? null);
  const delivery = new AnswerDelivery(channel, botChat, null, log);
  const workdirs = ports.workdirs ?? new FakeWorkingDirectories();
  const contexts = new RunContexts(memory, skills, log, ledger, workdirs, repository);
  const checks = new JobPreflight(agent, channel, settings, botChat, new JobFileChecks(scripts, workdirs), new DailyBudgets(ledger, clock));
  const answers = new JobAnswers(delivery, new JobRunReports(outputs, settings, log), settings, log);
  const marks = new JobRunMarks(repository, settings, answers, clock);
  const steps = new JobRunSteps(agent, contexts, scripts, settings, log, answers);
  const stops = ports.stops ?? new RunStops(ports.timer ?? null);
  const execution = new JobExecution(checks, steps, stops, marks, recorder, log);
  const pendings = new PendingJobDeliveries(answers, marks, checks, recorder, log);
  return { execution, pendings, answers, checks, recorder, contexts, delivery, stops };
}

/** `agent cron redeliver` on the cron run path of `ports`. */
export function redeliverJobRun(ports: CronRunPorts, identity: ProcessIdentity): RedeliverJobRun {
  const { answers, checks } = cronRunPipeline(ports);
  const claims = new RedeliveryClaims(ports.ledger, identity, ports.clock, ports.log);
  return new RedeliverJobRun(ports.repository, ports.ledger, claims, checks, answers, ports.log);
}

/** What a webhook run takes. */
export interface WebhookRunPorts {
  routes: WebhookRoutes;
  agent: AgentRunner;
  memory: MemoryStore;
  skills: SkillLibrary;
  channel: DeliveryChannel;
  commenter: RepoCommenter;
  settings: WebhookWorkerSettings;
  log: Logger;
  records: WebhookRunRecords;
  clock: Clock;
  timer: Timer;
  ledger: RunLedger;
  metrics?: Metrics;
}

/** The webhook run path and its collaborators. */
export function webhookRunPipeline(ports: WebhookRunPorts) {
  const { routes, agent, memory, skills, channel, commenter, settings, log, records, clock, timer, ledger } = ports;
  const recorder = new WebhookRunRecorder(records, new RunRecorder(ledger, log, clock, timer), log);
  const delivery = new AnswerDelivery(channel, new FakeBotChatDelivery(), commenter, log);
  const meter = new RunMeter(clock, ports.metrics);
  const execution = new WebhookEventExecution(
    new WebhookRunPreparation(routes, agent, channel, settings),
    new WebhookAgentStep(
      agent,
      new RunContexts(memory, skills, log, ledger, new FakeWorkingDirectories(), new InMemoryJobRepository()),
      settings,
      recorder,
      log,
      new RunStops(timer),
    ),
    new WebhookAnswerStep(recorder, delivery, meter, log),
    recorder,
    meter,
    log,
  );
  return { execution, recorder, delivery };
}

/** What `agent webhook redeliver` takes. */
export interface RedeliverWebhookPorts {
  ledger: RunLedger;
  records: WebhookRunRecords;
  channel: DeliveryChannel;
  commenter?: RepoCommenter;
  clock: Clock;
  identity: ProcessIdentity;
  log: Logger;
  answerLog?: AnswerLog | null;
}

/** `agent webhook redeliver` on `ports`. */
export function redeliverWebhookRun(ports: RedeliverWebhookPorts): RedeliverWebhookRun {
  const { ledger, records, channel, clock, identity, log } = ports;
  const recorder = new WebhookRunRecorder(records, new RunRecorder(ledger, log, clock), log);
  const delivery = new AnswerDelivery(channel, new FakeBotChatDelivery(), ports.commenter ?? new RecordingRepoCommenter(), log);
  return new RedeliverWebhookRun(
    ledger,
    recorder,
    new RedeliveryClaims(ledger, identity, clock, log),
    delivery,
    log,
    ports.answerLog ?? null,
  );
}

/** What chats reaching the agent take. */
export interface ChatPorts {
  agent: AgentRunner;
  memory: MemoryStore;
  cronSettings: CronSettings;
  store: ConversationStore;
  channel: DeliveryChannel;
  settings: ChatSettings;
  clock: Clock;
  timer: Timer;
  log: Logger;
}

/** Chats reaching the agent, on the run pipeline. */
export function converseInChats(ports: ChatPorts): ConverseInChats {
  const { agent, memory, cronSettings, store, channel, settings, clock, timer, log } = ports;
  const ask = new AskAgent(
    agent,
    new RunContexts(
      memory,
      { find: async () => null },
      log,
      new InMemoryRunLedger(),
      new FakeWorkingDirectories(),
      new InMemoryJobRepository(),
    ),
    cronSettings,
  );
  const turns = new ChatTurns(ask, store, new AnswerDelivery(channel, null, null, log), settings, log);
  return new ConverseInChats(turns, store, settings, clock, timer, log);
}
