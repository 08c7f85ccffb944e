import type { ChatModel, ModelTurnRequest } from '../../../src/application/agent/ports/ChatModel.js';
import { RunAgentSession, type ProviderTarget } from '../../../src/application/agent/RunAgentSession.js';
import type { AgentRunRequest, AgentRunResult, AgentRunner } from '../../../src/application/ports/AgentRunner.js';
import { WebhookWorker } from '../../../src/adapters/webhook/WebhookWorker.js';
import type { ModelTurn } from '../../../src/domain/agent/transcript.js';
import { anEvent } from '../../contract/WebhookInbox.contract.js';
import { FakeMemoryStore, FakeSkillLibrary } from '../../support/fakes/FakeContextFiles.js';
import { FakeWebhookRoutes, aRoute } from '../../support/fakes/FakeWebhookRoutes.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import { InMemoryWebhookInbox } from '../../support/fakes/InMemoryWebhookInbox.js';
import { InMemoryWebhookRunRecords } from '../../support/fakes/InMemoryWebhookRunRecords.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingDeliveryChannel } from '../../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingRepoCommenter } from '../../support/fakes/RecordingRepoCommenter.js';
import { FixedToolCatalog } from '../../support/scriptedTools.js';
import { WEBHOOK_WORKER_SETTINGS } from '../../support/webhookWorkerSettings.js';
import { webhookRunPipeline } from '../../support/runPipeline.js';

/*
 * A gateway's worker holding a thousand model sessions at once: each streams its answer in 300
 * chunks over 30 s of a timer the test moves, through the real session loop. Every event is
 * recorded once, and all were in flight together: nothing in the path runs them a few at a time.
 */

const SESSIONS = 1000;
const CHUNKS = 300;
const CHUNK_MS = 100;

/** A model that streams `CHUNKS` chunks, one every `CHUNK_MS` of the manual timer, and counts what is open. */
class StreamingModel implements ChatModel {
  readonly endpoint = 'http://model.test/v1';
  open = 0;
  peak = 0;
  calls = 0;

  constructor(private readonly timer: ManualTimer) {}

  async streamTurn(request: ModelTurnRequest): Promise<ModelTurn> {
    this.calls += 1;
    this.peak = Math.max(this.peak, (this.open += 1));
    try {
      let text = '';
      for (let chunk = 0; chunk < CHUNKS; chunk += 1) {
        await this.timer.wait(CHUNK_MS, request.signal);
        request.onActivity();
        request.onText('x');
        text += 'x';
      }
      return {
        text: `answer of ${text.length} chunks`,
        toolCalls: [],
        usage: { input_tokens: 40, output_tokens: CHUNKS, cached_input_tokens: 0 },
      };
    } finally {
      this.open -= 1;
    }
  }
}

/** The agent runner of the gateway reduced to its session: one provider, no tools. */
class SessionRunner implements AgentRunner {
  constructor(
    private readonly session: RunAgentSession,
    private readonly target: ProviderTarget,
  ) {}

  problemWith(): string | null {
    return null;
  }

  run(request: AgentRunRequest): Promise<AgentRunResult> {
    return this.session.execute({ request, chain: [this.target] });
  }
}

const turnOfTheLoop = () => new Promise((resolve) => setImmediate(resolve));

describe('a thousand model sessions in one webhook worker', () => {
  it('holds every session in flight at once and records each event once', async () => {
    const modelTime = new ManualTimer();
    const model = new StreamingModel(modelTime);
    const session = new RunAgentSession({ tools: new FixedToolCatalog([]), timer: modelTime });
    const agent = new SessionRunner(session, {
      provider: 'bench',
      model: 'streaming',
      chatModel: async () => model,
      credentials: null,
      keyHelp: 'none',
    });
    const settings = { ...WEBHOOK_WORKER_SETTINGS, maxConcurrentRuns: SESSIONS, defaultModel: { provider: 'bench', model: null } };
    // With the default retention of 50 records per route: those of runs under way stay until they end.
    const records = new InMemoryWebhookRunRecords();
    const ledger = new InMemoryRunLedger();
    const channel = new RecordingDeliveryChannel(['telegram']);
    const log = new RecordingLogger();
    const { execution } = webhookRunPipeline({
      routes: new FakeWebhookRoutes([aRoute('pr-review')]),
      agent,
      memory: new FakeMemoryStore([]),
      skills: new FakeSkillLibrary({}),
      channel,
      commenter: new RecordingRepoCommenter(),
      settings,
      log,
      records,
      clock: new ManualClock('2026-06-01T08:00:05Z'),
      timer: new ManualTimer(),
      ledger,
    });
    const inbox = new InMemoryWebhookInbox();
    for (let n = 1; n <= SESSIONS; n += 1) await inbox.accept(anEvent(n));
    const worker = new WebhookWorker(inbox, execution, settings, log, new ManualTimer());

    await worker.start();
    for (let turn = 0; turn < 1000 && model.open < SESSIONS; turn += 1) await turnOfTheLoop();
    expect(model.open).toBe(SESSIONS);

    for (let step = 0; step < CHUNKS; step += 1) {
      modelTime.advance(CHUNK_MS);
      await turnOfTheLoop();
    }
    await worker.whenIdle();
    await worker.stop(1000);

    expect(model.calls).toBe(SESSIONS);
    expect(model.peak).toBe(SESSIONS);
    // Each event's record ends once: delivered to the log, with its whole answer.
    const ended = records.saves.filter((record) => record.outcome === 'delivered');
    expect(ended.length).toBe(SESSIONS);
    expect(new Set(ended.map((record) => record.eventId)).size).toBe(SESSIONS);
    expect(ended.every((record) => record.answer === `answer of ${CHUNKS} chunks`)).toBe(true);
    expect(log.entries.filter((entry) => entry.level === 'error')).toEqual([]);
  });
});
