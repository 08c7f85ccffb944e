import { InMemoryRunLedger } from './fakes/InMemoryRunLedger.js';
import { AskAgent } from '../../src/application/chat/AskAgent.js';
import { CreateJob } from '../../src/application/cron/CreateJob.js';
import { EditJob } from '../../src/application/cron/EditJob.js';
import { JobWarnings } from '../../src/application/cron/JobWarnings.js';
import { ListJobRuns } from '../../src/application/cron/ListJobRuns.js';
import { ListJobs } from '../../src/application/cron/ListJobs.js';
import { PauseJob } from '../../src/application/cron/PauseJob.js';
import { RemoveJob } from '../../src/application/cron/RemoveJob.js';
import { ResumeJob } from '../../src/application/cron/ResumeJob.js';
import { DispatchDueJobs } from '../../src/application/cron/DispatchDueJobs.js';
import { DispatchedRuns } from '../../src/application/cron/DispatchedRuns.js';
import { DueJobClaims } from '../../src/application/cron/DueJobClaims.js';
import { CancelJobRun } from '../../src/application/cron/CancelJobRun.js';
import { CancelRequestedRuns } from '../../src/application/cron/CancelRequestedRuns.js';
import { RunStops } from '../../src/application/runs/RunStops.js';
import { RunDueJobs } from '../../src/application/cron/RunDueJobs.js';
import { RunJobNow } from '../../src/application/cron/RunJobNow.js';
import { ShowJob } from '../../src/application/cron/ShowJob.js';
import type { CronSettings } from '../../src/application/ports/Settings.js';
import { RunClaimants } from '../../src/application/runs/RunClaimants.js';
import type { StartCliFiring } from '../../src/adapters/cli/cliFiring.js';
import { BuiltInTickerProvider } from '../../src/adapters/scheduling/BuiltInTickerProvider.js';
import type { Job } from '../../src/domain/Job.js';
import { FakeAgentRunner } from './fakes/FakeAgentRunner.js';
import { FakeBotChatDelivery } from './fakes/FakeBotChatDelivery.js';
import { InMemoryBotChatOwner } from './fakes/InMemoryBotChatOwner.js';
import { FakeMemoryStore, FakeSkillLibrary } from './fakes/FakeContextFiles.js';
import { FakeProcessIdentity } from './fakes/FakeProcessIdentity.js';
import { FakeScriptExecutor } from './fakes/FakeScriptExecutor.js';
import { FakeWorkingDirectories } from './fakes/FakeWorkingDirectories.js';
import { FakeTickLock } from './fakes/FakeTickLock.js';
import { InMemoryJobRepository } from './fakes/InMemoryJobRepository.js';
import { InMemoryRunOutputStore } from './fakes/InMemoryRunOutputStore.js';
import { ManualTimer } from './fakes/ManualTimer.js';
import { ManualClock } from './fakes/ManualClock.js';
import { RecordingDeliveryChannel } from './fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from './fakes/RecordingLogger.js';
import { RecordingMetrics } from './fakes/RecordingMetrics.js';
import { SequentialIds } from './fakes/SequentialIds.js';
import { cronRunPipeline, redeliverJobRun } from './runPipeline.js';
import { RunContexts } from '../../src/application/runs/RunContexts.js';

export const T0 = '2026-06-01T08:00:00Z';

/** Every cron use case built by hand on fakes, the way a unit test wants them. */
export function cronHarness(options: { jobs?: Job[]; settings?: Partial<CronSettings>; now?: string; platforms?: string[] } = {}) {
  const repository = new InMemoryJobRepository(options.jobs ?? []);
  const clock = new ManualClock(options.now ?? T0);
  const ids = new SequentialIds();
  const agent = new FakeAgentRunner();
  const channel = new RecordingDeliveryChannel(options.platforms);
  const outputs = new InMemoryRunOutputStore();
  const memory = new FakeMemoryStore();
  const skills = new FakeSkillLibrary();
  const scripts = new FakeScriptExecutor();
  const tickLock = new FakeTickLock();
  const identity = new FakeProcessIdentity();
  const log = new RecordingLogger();
  const botChat = new FakeBotChatDelivery();
  const botChatOwner = new InMemoryBotChatOwner();
  const settings: CronSettings = {
    timeZone: 'UTC',
    wrapResponse: true,
    maxParallelJobs: 4,
    outputRetention: 50,
    idleTimeoutMs: 600_000,
    scriptTimeoutMs: 3_600_000,
    defaultModel: { provider: 'command', model: null },
    ...options.settings,
  };
  const ledger = new InMemoryRunLedger(undefined, () => clock.now());
  const workdirs = new FakeWorkingDirectories();
  const timer = new ManualTimer();
  const stops = new RunStops(timer);
  const runPorts = { agent, channel, outputs, memory, skills, scripts, settings, log, repository, botChat, ledger, clock, workdirs, stops };
  const { execution, pendings } = cronRunPipeline(runPorts);
  const metrics = new RecordingMetrics();
  const claimants = new RunClaimants(identity);
  const runDueJobs = new RunDueJobs(
    new DueJobClaims(repository, tickLock, clock, claimants, settings),
    clock,
    settings,
    log,
    () => execution,
  );
  // CLI mode's firing, as the composition starts it: the built-in ticker on the firing path given.
  const startFiring: StartCliFiring = async (cadence, fire) => {
    const provider = new BuiltInTickerProvider(cadence);
    await provider.start({ jobs: repository, fire, clock, log, settings: {}, env: {} });
    return provider;
  };
  return {
    pendings,
    ledger,
    timer,
    metrics,
    execution,
    repository,
    clock,
    ids,
    agent,
    channel,
    outputs,
    memory,
    skills,
    scripts,
    tickLock,
    identity,
    claimants,
    log,
    settings,
    botChat,
    botChatOwner,
    workdirs,
    createJob: new CreateJob(repository, clock, ids, scripts, settings, workdirs),
    editJob: new EditJob(repository, clock, scripts, settings, workdirs),
    jobWarnings: new JobWarnings(channel, skills),
    pauseJob: new PauseJob(repository, clock),
    resumeJob: new ResumeJob(repository, clock, settings),
    removeJob: new RemoveJob(repository, outputs),
    listJobs: new ListJobs(repository),
    showJob: new ShowJob(repository, outputs, ledger, settings, clock),
    listJobRuns: new ListJobRuns(repository, outputs, ledger, settings),
    redeliverJobRun: redeliverJobRun(runPorts, identity),
    runJobNow: new RunJobNow(repository, clock, identity, execution, settings),
    runDueJobs,
    startFiring,
    stops,
    cancelJobRun: new CancelJobRun(repository, clock, timer, stops),
    cancelRequestedRuns: new CancelRequestedRuns(repository, stops, timer, log),
    watchCancels: () => () => undefined,
    dispatchDueJobs: new DispatchDueJobs(runDueJobs, new DispatchedRuns(execution, clock, settings, log, metrics), timer, settings, log),
    askAgent: new AskAgent(agent, new RunContexts(memory, skills, log, ledger, workdirs, repository), settings),
  };
}
