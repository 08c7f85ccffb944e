import { AgentRunError, type AgentRunRequest } from '../../../src/application/ports/AgentRunner.js';
import { RepoCommentError } from '../../../src/application/ports/RepoCommenter.js';
import type { WebhookWorkerSettings } from '../../../src/application/ports/Settings.js';
import { WebhookWorker } from '../../../src/adapters/webhook/WebhookWorker.js';
import type { WebhookRoute } from '../../../src/domain/webhook/WebhookRoute.js';
import { EMPTY_ANSWER_NOTICE, WEBHOOK_PREAMBLE } from '../../../src/domain/webhook/webhookRun.js';
import { anEvent } from '../../contract/WebhookInbox.contract.js';
import { FakeAgentRunner } from '../../support/fakes/FakeAgentRunner.js';
import { FakeMemoryStore, FakeSkillLibrary } from '../../support/fakes/FakeContextFiles.js';
import { FakeWebhookRoutes, aRoute } from '../../support/fakes/FakeWebhookRoutes.js';
import { InMemoryWebhookInbox } from '../../support/fakes/InMemoryWebhookInbox.js';
import { InMemoryWebhookRunRecords } from '../../support/fakes/InMemoryWebhookRunRecords.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { InMemoryRunLedger } from '../../support/fakes/InMemoryRunLedger.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingDeliveryChannel } from '../../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingRepoCommenter } from '../../support/fakes/RecordingRepoCommenter.js';
import { eventually } from '../../support/processLiveness.js';
import { WEBHOOK_WORKER_SETTINGS } from '../../support/webhookWorkerSettings.js';
import { webhookRunPipeline } from '../../support/runPipeline.js';

/** A promise the test settles by hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

function worker(options: { routes?: WebhookRoute[]; settings?: Partial<WebhookWorkerSettings>; inbox?: InMemoryWebhookInbox } = {}) {
  const inbox = options.inbox ?? new InMemoryWebhookInbox();
  const routes = new FakeWebhookRoutes(options.routes ?? [aRoute('pr-review')]);
  const agent = new FakeAgentRunner();
  const memory = new FakeMemoryStore([{ name: 'MEMORY.md', content: 'Be brief.' }]);
  const skills = new FakeSkillLibrary({ triage: 'Sort by urgency.', review: 'Review carefully.' });
  const channel = new RecordingDeliveryChannel(['telegram', 'slack']);
  const commenter = new RecordingRepoCommenter();
  const log = new RecordingLogger();
  const settings: WebhookWorkerSettings = { ...WEBHOOK_WORKER_SETTINGS, ...options.settings };
  const records = new InMemoryWebhookRunRecords();
  // The runs' own waits (when a record shows a run as running) are not the worker's.
  const execution = webhookRunPipeline({
    routes: routes,
    agent: agent,
    memory: memory,
    skills: skills,
    channel: channel,
    commenter: commenter,
    settings: settings,
    log: log,
    records: records,
    clock: new ManualClock('2026-06-01T08:00:05Z'),
    timer: new ManualTimer(),
    ledger: new InMemoryRunLedger(),
  }).execution;
  const timer = new ManualTimer();
  const subject = new WebhookWorker(inbox, execution, settings, log, timer);
  /** Accepts `events` into the inbox, starts the worker, waits until everything ran and stops it. */
  const runAll = async (...events: ReturnType<typeof anEvent>[]) => {
    for (const event of events) await inbox.accept(event);
    await subject.start();
    await subject.whenIdle();
    await subject.stop(1000);
  };
  const errors = () => log.entries.filter((entry) => entry.level === 'error').map((entry) => entry.message);
  return { inbox, routes, agent, skills, channel, commenter, log, settings, records, timer, worker: subject, runAll, errors };
}

describe('a webhook run', () => {
  it('renders the route prompt from the payload and runs a fresh unattended session with the route toolsets', async () => {
    const w = worker({
      routes: [aRoute('pr-review', { prompt: 'Review PR #{number}: {pull_request.title}', toolsets: ['web', 'terminal'] })],
    });

    await w.runAll(anEvent(7));

    const request = w.agent.requests[0]!;
    expect(request.context.task).toBe(`${WEBHOOK_PREAMBLE}\n\nReview PR #7: PR 7`);
    expect(request.context.system).toEqual([{ name: 'MEMORY.md', content: 'Be brief.' }]);
    expect(request.conversation).toBeUndefined();
    expect(request).toMatchObject({
      toolsets: ['web', 'terminal'],
      unattended: true,
      privateNetworks: false,
      idleTimeoutMs: 600_000,
      selection: { provider: 'command', model: null },
    });
  });

  it('lets the tools of a run reach private networks only when its route allows it', async () => {
    const w = worker({ routes: [aRoute('internal-alerts', { allowPrivateNetworks: true })] });

    await w.runAll(anEvent(1, { route: 'internal-alerts' }));

    expect(w.agent.requests[0]!.privateNetworks).toBe(true);
  });

  it('gives the agent the event, the route and the payload when the route has no prompt', async () => {
    const w = worker();

    await w.runAll(anEvent(1));

    const task = w.agent.requests[0]!.context.task;
    expect(task).toContain('A webhook event "pull_request" arrived on the route "pr-review".');
    expect(task).toContain('"title": "PR 1"');
  });

  it('loads only the first skill of the list that exists', async () => {
    const w = worker({ routes: [aRoute('pr-review', { skills: ['missing', 'triage', 'review'] })] });

    await w.runAll(anEvent(1));

    expect(w.agent.requests[0]!.context.skills).toEqual([{ name: 'triage', content: 'Sort by urgency.' }]);
  });

  it('runs without a skill, with a warning, when none of the listed skills exists', async () => {
    const w = worker({ routes: [aRoute('pr-review', { skills: ['gone', 'also-gone'] })] });

    await w.runAll(anEvent(1));

    expect(w.agent.requests[0]!.context.skills).toEqual([]);
    expect(w.log.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: expect.stringContaining('gone, also-gone') }));
  });

  it('writes the answer to the gateway log at info for deliver: log, and completes the event', async () => {
    const w = worker();
    w.agent.reply('LGTM, ship it.');

    await w.runAll(anEvent(1));

    expect(w.log.entries).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: "webhook answer on route 'pr-review':\nLGTM, ship it.",
        fields: expect.objectContaining({ delivery_id: 'delivery-1' }),
      }),
    );
    expect(await w.inbox.pending()).toBe(0);
  });

  it('comments on the pull request named by the rendered deliver_extra for repo_comment', async () => {
    const route = aRoute('pr-review', { deliver: 'repo_comment', deliverExtra: { repo: '{repository.full_name}', pr_number: '{number}' } });
    const w = worker({ routes: [route] });
    w.agent.reply('Two nits.');

    await w.runAll(anEvent(12, { payload: { number: 12, repository: { full_name: 'octo/widgets' } } }));

    expect(w.commenter.comments).toEqual([{ repo: 'octo/widgets', prNumber: 12, body: 'Two nits.' }]);
  });

  it.each([
    [
      'a repo that is not owner/name',
      { repo: '{repository.name}', pr_number: '{number}' },
      /deliver_extra\.repo must give "owner\/name" \(got "widgets"\)/,
    ],
    ['a repo that does not render', { repo: '{repository.full_name}', pr_number: '{number}' }, /got "\{repository\.full_name\}"/],
    [
      'a PR number that is not a positive whole number',
      { repo: 'octo/widgets', pr_number: '{action}' },
      /pr_number must give a positive whole number \(got "opened"\)/,
    ],
    ['a PR number of 0', { repo: 'octo/widgets', pr_number: '0' }, /pr_number must give a positive whole number/],
  ])('runs nothing and logs the error for %s', async (_case, deliverExtra, error) => {
    const w = worker({ routes: [aRoute('pr-review', { deliver: 'repo_comment', deliverExtra })] });

    await w.runAll(anEvent(1, { payload: { action: 'opened', number: 1, repository: { name: 'widgets' } } }));

    expect(w.agent.requests).toHaveLength(0);
    expect(w.commenter.comments).toHaveLength(0);
    expect(w.errors()).toEqual([expect.stringMatching(error)]);
    expect(await w.inbox.pending()).toBe(0);
  });

  it('logs a missing gh as such, naming the pull request', async () => {
    const w = worker({
      routes: [aRoute('pr-review', { deliver: 'repo_comment', deliverExtra: { repo: 'octo/widgets', pr_number: '3' } })],
    });
    w.commenter.failWith = new RepoCommentError('cli_missing', 'the GitHub CLI "gh" is not installed or not on PATH; install it');

    await w.runAll(anEvent(1));

    expect(w.errors()).toEqual([
      'webhook delivery to octo/widgets#3 failed: the GitHub CLI "gh" is not installed or not on PATH; install it (no comment was posted)',
    ]);
    expect(await w.inbox.pending()).toBe(0);
  });

  it('delivers to a chat platform at deliver_extra.chat_id, or to its home channel without one', async () => {
    const w = worker({
      routes: [aRoute('alerts', { deliver: 'telegram', deliverExtra: { chat_id: '-1001234' } }), aRoute('home', { deliver: 'slack' })],
    });
    w.agent.reply('Alert handled.', 'Noted.');

    await w.runAll(anEvent(1, { route: 'alerts' }), anEvent(2, { route: 'home' }));

    expect(w.channel.sent).toEqual([
      { target: { kind: 'platform', platform: 'telegram', destination: '-1001234', threadId: null }, text: 'Alert handled.' },
      { target: { kind: 'platform', platform: 'slack', destination: null, threadId: null }, text: 'Noted.' },
    ]);
  });

  it('logs a delivery error for a platform without a configured adapter and spends nothing', async () => {
    const w = worker({ routes: [aRoute('pr-review', { deliver: 'signal' })] });

    await w.runAll(anEvent(1));

    expect(w.agent.requests).toHaveLength(0);
    expect(w.errors()).toEqual([
      expect.stringMatching(/route 'pr-review' cannot deliver: Delivery platform "signal" is not configured: set platforms\.signal\./),
    ]);
  });

  it('logs a delivery the platform refused', async () => {
    const w = worker({ routes: [aRoute('pr-review', { deliver: 'telegram' })] });
    w.channel.failing.add('telegram');

    await w.runAll(anEvent(1));

    expect(w.errors()).toEqual(['webhook delivery to telegram failed: telegram refused the message']);
  });

  it('still delivers when the agent answers nothing, with a notice in place of the answer', async () => {
    const w = worker({ routes: [aRoute('pr-review', { deliver: 'telegram' })] });
    w.agent.reply('   ');

    await w.runAll(anEvent(1));

    expect(w.channel.sent.map((sent) => sent.text)).toEqual([EMPTY_ANSWER_NOTICE]);
  });

  it('logs a failed run and completes the event instead of retrying it', async () => {
    const w = worker();
    w.agent.reply(new AgentRunError('idle_timeout', 'the agent was idle for 600 s'));

    await w.runAll(anEvent(1));

    expect(w.errors()).toEqual(["webhook run on route 'pr-review' failed: the agent was idle for 600 s"]);
    expect(w.agent.requests).toHaveLength(1);
    expect(await w.inbox.pending()).toBe(0);
  });

  it('runs nothing when no model is configured, and says so', async () => {
    const w = worker();
    w.agent.configured = false;

    await w.runAll(anEvent(1));

    expect(w.agent.requests).toHaveLength(0);
    expect(w.errors()).toEqual([expect.stringContaining('No model is configured')]);
  });

  it('drops an event whose route was removed after it was accepted', async () => {
    const w = worker();

    await w.runAll(anEvent(1, { route: 'removed-meanwhile' }));

    expect(w.errors()).toEqual(["webhook event not run: the route 'removed-meanwhile' no longer exists"]);
    expect(await w.inbox.pending()).toBe(0);
  });
});

describe('the webhook worker', () => {
  it('runs at most max_concurrent_runs events at a time, claiming them in acceptance order', async () => {
    const w = worker({ settings: { maxConcurrentRuns: 2 } });
    const release = deferred();
    let running = 0;
    let most = 0;
    w.agent.defaultReply = async () => {
      running += 1;
      most = Math.max(most, running);
      await release.promise;
      running -= 1;
      return 'done';
    };
    for (const n of [1, 2, 3, 4, 5]) await w.inbox.accept(anEvent(n, { payload: { n } }));

    await w.worker.start();
    expect(await eventually(() => w.agent.requests.length === 2)).toBe(true);
    release.resolve();
    await w.worker.whenIdle();

    expect(most).toBe(2);
    expect(w.agent.requests.map((request) => JSON.parse(/\{[\s\S]*\}/.exec(request.context.task)![0]).n)).toEqual([1, 2, 3, 4, 5]);
    await w.worker.stop(1000);
  });

  it('frees the run slot once the answer is recorded: a platform that hangs delays only its own deliveries', async () => {
    const w = worker({
      routes: [aRoute('faulty', { deliver: 'telegram' }), aRoute('healthy', { deliver: 'slack' })],
      settings: { maxConcurrentRuns: 1, maxConcurrentDeliveries: 1 },
    });
    const telegramAnswers = deferred();
    w.channel.held.set('telegram', telegramAnswers.promise);
    w.agent.defaultReply = async (request: AgentRunRequest) => `answer to ${/"n": (\d+)/.exec(request.context.task)![1]}`;
    for (const n of [1, 2, 3]) await w.inbox.accept(anEvent(n, { route: 'faulty', payload: { n } }));
    await w.inbox.accept(anEvent(4, { route: 'healthy', payload: { n: 4 } }));

    await w.worker.start();

    expect(await eventually(() => w.channel.sent.length === 1)).toBe(true);
    expect(w.channel.sent[0]).toMatchObject({ target: { platform: 'slack' }, text: 'answer to 4' });
    expect(w.agent.requests).toHaveLength(4);
    expect(await w.inbox.pending()).toBe(3);
    expect((await w.records.find('faulty', 'event-1'))?.outcome).toBe('answered');

    telegramAnswers.resolve();
    await w.worker.whenIdle();
    expect(w.channel.sent.filter((sent) => sent.target.platform === 'telegram').map((sent) => sent.text)).toEqual([
      'answer to 1',
      'answer to 2',
      'answer to 3',
    ]);
    expect((await w.records.find('faulty', 'event-1'))?.outcome).toBe('delivered');
    expect(await w.inbox.pending()).toBe(0);
    await w.worker.stop(1000);
  });

  it('gives a free slot to a route with nothing running before the backlog of another route', async () => {
    const w = worker({ routes: [aRoute('busy'), aRoute('quiet')], settings: { maxConcurrentRuns: 2 } });
    const release = deferred();
    w.agent.defaultReply = async () => {
      await release.promise;
      return 'done';
    };
    for (const n of [1, 2, 3, 4, 5, 6]) await w.inbox.accept(anEvent(n, { route: 'busy', payload: { route: 'busy', n } }));
    await w.inbox.accept(anEvent(7, { route: 'quiet', payload: { route: 'quiet', n: 7 } }));

    await w.worker.start();
    expect(await eventually(() => w.agent.requests.length === 2)).toBe(true);

    expect(w.agent.requests.map((request) => /"route": "(\w+)"/.exec(request.context.task)![1])).toEqual(['busy', 'quiet']);
    release.resolve();
    await w.worker.whenIdle();
    expect(w.agent.requests).toHaveLength(7);
    await w.worker.stop(1000);
  });

  it('leaves answers still waiting for a platform at stop to the next start, which delivers them without running the agent', async () => {
    const w = worker({ routes: [aRoute('faulty', { deliver: 'telegram' })], settings: { maxConcurrentDeliveries: 1 } });
    w.channel.held.set('telegram', new Promise<void>(() => undefined));
    w.agent.defaultReply = async () => 'the answer';
    for (const n of [1, 2]) await w.inbox.accept(anEvent(n, { route: 'faulty', payload: { n } }));
    await w.worker.start();
    expect(await eventually(() => w.agent.requests.length === 2)).toBe(true);

    const stopped = w.worker.stop(20, 10);
    w.timer.advance(20);
    await new Promise((resolve) => setImmediate(resolve));
    w.timer.advance(10);
    expect(await stopped).toBe(false);

    const after = worker({ routes: [aRoute('faulty', { deliver: 'telegram' })], inbox: w.inbox.restarted() });
    for (const n of [1, 2]) {
      const record = (await w.records.find('faulty', `event-${n}`))!;
      await after.records.save(record);
    }
    expect(await after.worker.start()).toBe(2);
    await after.worker.whenIdle();
    expect(after.agent.requests).toHaveLength(0);
    expect(after.channel.sent.map((sent) => sent.text)).toEqual(['the answer', 'the answer']);
    expect(await after.inbox.pending()).toBe(0);
    await after.worker.stop(1000);
  });

  it('runs again at start the events a killed process had claimed but not finished', async () => {
    const before = new InMemoryWebhookInbox();
    await before.accept(anEvent(1));
    await before.claimNext();
    const w = worker({ inbox: before.restarted() });

    expect(await w.worker.start()).toBe(1);
    await w.worker.whenIdle();

    expect(w.agent.requests).toHaveLength(1);
    expect(await w.inbox.pending()).toBe(0);
    await w.worker.stop(1000);
  });

  it('takes an event accepted after start as soon as it is notified', async () => {
    const w = worker();
    await w.worker.start();

    await w.inbox.accept(anEvent(1));
    await w.worker.notify();
    await w.worker.whenIdle();

    expect(w.agent.requests).toHaveLength(1);
    await w.worker.stop(1000);
  });

  it('finds events by polling when nobody notifies it, once the poll interval has passed', async () => {
    const w = worker({ settings: { pollIntervalMs: 10 } });
    await w.worker.start();
    await w.inbox.accept(anEvent(1));

    w.timer.advance(9);
    await new Promise((resolve) => setImmediate(resolve));
    expect(w.agent.requests).toHaveLength(0);
    w.timer.advance(1);

    expect(await eventually(() => w.agent.requests.length === 1)).toBe(true);
    await w.worker.stop(1000);
  });

  it('polls no more once stopped, and leaves no wait behind', async () => {
    const w = worker({ settings: { pollIntervalMs: 10 } });
    await w.worker.start();
    await w.worker.stop(1000);

    await w.inbox.accept(anEvent(1));
    w.timer.advance(10);
    await new Promise((resolve) => setImmediate(resolve));

    expect(w.agent.requests).toHaveLength(0);
    expect(w.timer.pending).toBe(0);
  });

  it('on stop claims nothing more and lets the run in progress finish', async () => {
    const w = worker({ settings: { maxConcurrentRuns: 1 } });
    const release = deferred();
    w.agent.reply(async () => {
      await release.promise;
      return 'finished';
    });
    await w.inbox.accept(anEvent(1));
    await w.inbox.accept(anEvent(2));
    await w.worker.start();

    const stopped = w.worker.stop(5000);
    release.resolve();

    expect(await stopped).toBe(true);
    expect(w.agent.requests).toHaveLength(1);
    expect(w.inbox.ids()).toEqual(['event-2']);
  });

  it('aborts a run still going when the grace period ends and leaves it for the next start', async () => {
    const w = worker();
    w.agent.reply(
      (request: AgentRunRequest) =>
        new Promise<string>((_resolve, reject) => {
          // A run that starts after the worker's grace ended is aborted from its start.
          if (request.signal!.aborted) reject(new AgentRunError('aborted', 'the run was aborted'));
          request.signal!.addEventListener('abort', () => reject(new AgentRunError('aborted', 'the run was aborted')));
        }),
    );
    await w.inbox.accept(anEvent(1));
    await w.worker.start();

    const stopped = w.worker.stop(20);
    w.timer.advance(20);

    expect(await stopped).toBe(false);

    expect(w.errors()).toEqual([]);
    const afterRestart = w.inbox.restarted();
    expect(await afterRestart.recover()).toBe(1);
  });

  it('completes a finished event once the inbox can be reached again, without running it twice', async () => {
    const inbox = new InMemoryWebhookInbox();
    const complete = inbox.complete.bind(inbox);
    let failures = 2;
    inbox.complete = async (eventId) => {
      if (failures-- > 0) throw new Error('the database is away');
      return complete(eventId);
    };
    const w = worker({ inbox });
    await inbox.accept(anEvent(1));
    await w.worker.start();

    // The poll's wait, and the retry's.
    expect(await eventually(() => w.timer.pending === 2)).toBe(true);
    w.timer.advance(1000);
    expect(await eventually(() => w.timer.pending === 2 && w.errors().length === 1)).toBe(true);
    w.timer.advance(2000);
    await w.worker.whenIdle();

    expect(await inbox.pending()).toBe(0);
    expect(w.agent.requests).toHaveLength(1);
    expect(w.errors()).toEqual([
      expect.stringMatching(
        /^webhook event event-1 finished but could not be completed in the inbox; trying again until it can: the database is away$/,
      ),
    ]);
    expect(w.log.entries.map((entry) => entry.message)).toContain('webhook event event-1 is completed in the inbox now');
    await w.worker.stop(1000);
  });

  it('says once that the inbox cannot be reached, and once that it can again', async () => {
    const inbox = new InMemoryWebhookInbox();
    const claimNext = inbox.claimNext.bind(inbox);
    let away = true;
    inbox.claimNext = async (skip) => {
      if (away) throw new Error('the database is away');
      return claimNext(skip);
    };
    const w = worker({ inbox, settings: { pollIntervalMs: 10 } });
    await inbox.accept(anEvent(1));
    await w.worker.start();
    for (let poll = 0; poll < 3; poll += 1) {
      w.timer.advance(10);
      await new Promise((resolve) => setImmediate(resolve));
    }
    away = false;
    w.timer.advance(10);

    expect(await eventually(() => w.agent.requests.length === 1)).toBe(true);
    expect(w.errors()).toEqual(['cannot take webhook events from the inbox; trying again at the next poll: the database is away']);
    expect(w.log.entries.filter((entry) => entry.message === 'webhook events are taken from the inbox again')).toHaveLength(1);
    await w.worker.stop(1000);
  });

  it('returns from stop even when a run ignores the abort', async () => {
    const w = worker();
    w.agent.reply(() => new Promise<string>(() => undefined));
    await w.inbox.accept(anEvent(1));
    await w.worker.start();

    const stopped = w.worker.stop(10, 10);
    w.timer.advance(10);
    expect(await eventually(() => w.timer.pending === 1)).toBe(true);
    w.timer.advance(10);

    expect(await stopped).toBe(false);
    expect(await w.inbox.pending()).toBe(1);
  });
});
