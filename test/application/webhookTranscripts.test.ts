import { AgentRunError } from '../../src/application/ports/AgentRunner.js';
import type { RunTranscript } from '../../src/domain/runs/RunTranscript.js';
import { anEvent } from '../contract/WebhookInbox.contract.js';
import { FakeAgentRunner } from '../support/fakes/FakeAgentRunner.js';
import { FakeMemoryStore, FakeSkillLibrary } from '../support/fakes/FakeContextFiles.js';
import { FakeWebhookRoutes, aRoute } from '../support/fakes/FakeWebhookRoutes.js';
import { InMemoryRunLedger } from '../support/fakes/InMemoryRunLedger.js';
import { InMemoryWebhookRunRecords } from '../support/fakes/InMemoryWebhookRunRecords.js';
import { ManualClock } from '../support/fakes/ManualClock.js';
import { ManualTimer } from '../support/fakes/ManualTimer.js';
import { RecordingDeliveryChannel } from '../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingRepoCommenter } from '../support/fakes/RecordingRepoCommenter.js';
import { webhookRunPipeline } from '../support/runPipeline.js';
import { WEBHOOK_WORKER_SETTINGS } from '../support/webhookWorkerSettings.js';

const TRANSCRIPT: RunTranscript = [
  {
    type: 'tool_call',
    started_at: '2026-06-01T08:00:05.000Z',
    ended_at: '2026-06-01T08:00:06.000Z',
    call_id: 'call_1',
    name: 'web_extract',
    arguments: '{"url":"https://example.org"}',
    result: 'Example Domain',
    result_bytes: 14,
    cut: null,
    is_error: false,
  },
];

function pipeline() {
  const agent = new FakeAgentRunner();
  const ledger = new InMemoryRunLedger(undefined, () => new Date('2026-06-01T08:00:05Z'));
  const { execution } = webhookRunPipeline({
    routes: new FakeWebhookRoutes([aRoute('alerts', { deliver: 'telegram', prompt: 'Alert: {labels.alertname}' })]),
    agent,
    memory: new FakeMemoryStore(),
    skills: new FakeSkillLibrary({}),
    channel: new RecordingDeliveryChannel(['telegram']),
    commenter: new RecordingRepoCommenter(),
    settings: WEBHOOK_WORKER_SETTINGS,
    log: new RecordingLogger(),
    records: new InMemoryWebhookRunRecords(),
    clock: new ManualClock('2026-06-01T08:00:05Z'),
    timer: new ManualTimer(),
    ledger,
  });
  return { agent, ledger, execution };
}

const alert = () => anEvent(1, { route: 'alerts', event: 'alert', payload: { labels: { alertname: 'DiskFull' } } });

describe('the transcripts of webhook runs', () => {
  it('are kept in the run ledger with the run that answered', async () => {
    const p = pipeline();
    p.agent.transcript = TRANSCRIPT;

    await p.execution.run(alert());

    expect(await p.ledger.get('event-1')).toMatchObject({ status: 'ok' });
    expect(await p.ledger.transcriptOf('event-1')).toEqual(TRANSCRIPT);
  });

  it('are kept, as far as they went, with a run that failed', async () => {
    const p = pipeline();
    const failure = new AgentRunError('failed', 'The provider local (test) failed: boom.');
    failure.transcript = TRANSCRIPT;
    p.agent.reply(failure);

    await p.execution.run(alert());

    expect(await p.ledger.get('event-1')).toMatchObject({ status: 'error' });
    expect(await p.ledger.transcriptOf('event-1')).toEqual(TRANSCRIPT);
  });
});
