import { describe, expect, it } from '@jest/globals';
import { AnswerDelivery, describeAnswerTarget, laneOf } from '../../../src/application/runs/AnswerDelivery.js';
import { RepoCommentError } from '../../../src/application/ports/RepoCommenter.js';
import type { AnswerLog } from '../../../src/application/ports/AnswerLog.js';
import { FakeBotChatDelivery } from '../../support/fakes/FakeBotChatDelivery.js';
import { RecordingDeliveryChannel } from '../../support/fakes/RecordingDeliveryChannel.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingTracing } from '../../support/fakes/RecordingTracing.js';
import { RecordingRepoCommenter } from '../../support/fakes/RecordingRepoCommenter.js';

const TELEGRAM = { kind: 'platform', platform: 'telegram', destination: '-100123', threadId: null } as const;
const SLACK = { kind: 'platform', platform: 'slack', destination: 'C123', threadId: null } as const;
const JOB = { kind: 'cron', job: { id: 'a1b2c3d4e5f6', name: 'nightly' }, executionId: 'host:1@2026-06-01T08:00:00.000Z' } as const;
const ROUTE = { kind: 'webhook', route: 'github', about: { event_id: 'event-1' } } as const;

function delivery() {
  const channel = new RecordingDeliveryChannel(['telegram', 'slack']);
  const botChat = new FakeBotChatDelivery();
  const commenter = new RecordingRepoCommenter();
  const log = new RecordingLogger();
  return { channel, botChat, commenter, log, subject: new AnswerDelivery(channel, botChat, commenter, log) };
}

describe('AnswerDelivery, targets in and how it went to each out', () => {
  it('sends to each target in order and says how it went; the output file gets no entry', async () => {
    const { channel, botChat, subject } = delivery();
    const sent = await subject.send([{ kind: 'local' }, TELEGRAM, { kind: 'bot-chat', profile: null }], 'All green.', {
      ...JOB,
      platformText: 'Cronjob Response: nightly\n\nAll green.',
    });
    expect(sent.map(({ target, outcome }) => `${target}: ${outcome}`)).toEqual(['telegram:-100123: delivered', 'bot-chat: delivered']);
    expect(channel.sent).toEqual([{ target: TELEGRAM, text: 'Cronjob Response: nightly\n\nAll green.' }]);
    expect(botChat.delivered[0]).toMatchObject({ jobId: 'a1b2c3d4e5f6', executionId: JOB.executionId });
    expect(botChat.delivered[0]!.message).toContain('All green.');
  });

  it('keeps going after a target that fails, with the reason in the kind’s own words', async () => {
    const { channel, subject } = delivery();
    channel.failing.add('telegram');
    channel.refusals.set('telegram', 'chat not found\u001b[0m');
    const forJob = await subject.send([TELEGRAM, SLACK], 'Hi.', JOB);
    expect(forJob.map((each) => each.outcome)).toEqual(['failed', 'delivered']);
    expect(forJob[0]!.error).not.toContain('\u001b');
    const forRoute = await subject.send([TELEGRAM], 'Hi.', ROUTE);
    expect(forRoute[0]!.error).toMatch(/^delivery to telegram:-100123 failed: /);
  });

  it('comments on a pull request, and says when the code host refused before posting', async () => {
    const { commenter, subject } = delivery();
    const target = { kind: 'repo_comment', repo: 'octo/widgets', prNumber: 12 } as const;
    expect((await subject.send([target], 'Looks good.', ROUTE))[0]).toMatchObject({ target: 'octo/widgets#12', outcome: 'delivered' });
    expect(commenter.comments).toEqual([{ repo: 'octo/widgets', prNumber: 12, body: 'Looks good.' }]);
    commenter.failWith = new RepoCommentError('unauthenticated', 'gh is not signed in');
    const [refused] = await subject.send([target], 'Again.', ROUTE);
    expect(refused!.error).toBe('delivery to octo/widgets#12 failed: gh is not signed in (no comment was posted)');
  });

  it('writes an answer for the log to the answer log when one is given, else to its own log', async () => {
    const { log, subject } = delivery();
    expect((await subject.send([{ kind: 'log' }], 'Noted.', ROUTE))[0]).toMatchObject({ target: 'the log', outcome: 'delivered' });
    expect(log.entries).toEqual([{ level: 'info', message: "webhook answer on route 'github':\nNoted.", fields: { event_id: 'event-1' } }]);
    const answerLog: AnswerLog = { write: async () => 'the gateway log (process 42)' };
    const [written] = await subject.send([{ kind: 'log' }], 'Noted.', { ...ROUTE, answerLog });
    expect(written!.loggedTo).toBe('the gateway log (process 42)');
  });

  it('refuses bot-chat for anything but a job’s answer', async () => {
    const { subject } = delivery();
    const [sent] = await subject.send([{ kind: 'bot-chat', profile: null }], 'Hi.', ROUTE);
    expect(sent).toMatchObject({ outcome: 'failed' });
  });

  it('sends a notice to the platforms among the targets only, and logs one that cannot be sent', async () => {
    const { channel, log, subject } = delivery();
    channel.failing.add('slack');
    await subject.notify([{ kind: 'local' }, TELEGRAM, SLACK, { kind: 'bot-chat', profile: null }], 'It failed.', 'failure notice', {
      label: "job 'nightly'",
      about: { job: 'a1b2c3d4e5f6' },
    });
    expect(channel.sent.map((each) => each.target.platform)).toEqual(['telegram']);
    expect(log.entries).toEqual([
      {
        level: 'warn',
        message: "could not send the failure notice of job 'nightly'",
        fields: { job: 'a1b2c3d4e5f6', error: expect.any(String) },
      },
    ]);
  });

  it('names targets and their lanes the same for every run kind', () => {
    expect(laneOf(TELEGRAM)).toBe('platform:telegram');
    expect(laneOf({ kind: 'log' })).toBe('log');
    expect(laneOf({ kind: 'bot-chat', profile: null })).toBe('bot-chat');
    expect(describeAnswerTarget({ kind: 'repo_comment', repo: 'octo/widgets', prNumber: 3 })).toBe('octo/widgets#3');
  });
});

describe('AnswerDelivery: spans (docs/traces.md)', () => {
  it('makes a span per target it sends to, with how it went and the message ids, and none for the output file', async () => {
    const channel = new RecordingDeliveryChannel(['telegram']);
    const tracing = new RecordingTracing();
    const subject = new AnswerDelivery(channel, null, null, new RecordingLogger(), tracing);

    await subject.send([{ kind: 'local' }, TELEGRAM, SLACK, { kind: 'log' }], 'All green.', ROUTE);

    expect(tracing.of('delivery').map((span) => [span.what, span.notes])).toEqual([
      [
        { kind: 'delivery', target: 'telegram:-100123', platform: 'telegram' },
        [{ outcome: 'delivered', messageIds: expect.any(Array), error: null }],
      ],
      [
        { kind: 'delivery', target: 'slack:C123', platform: 'slack' },
        [{ outcome: 'delivered', messageIds: expect.any(Array), error: null }],
      ],
      [{ kind: 'delivery', target: 'the log', platform: null }, [{ outcome: 'delivered', messageIds: [], error: null }]],
    ]);
  });
});
