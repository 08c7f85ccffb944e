import request from 'supertest';
import { createSlackEventsSource, type SlackEventsSource } from '../../../src/adapters/inbound/SlackEventsSource.js';
import type { InboundMessage } from '../../../src/domain/chat/inboundMessage.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import {
  ALICE,
  ALICE_DM,
  FakeSlackEvents,
  GENERAL,
  SLACK_BOT_USER,
  SLACK_SIGNING_SECRET,
} from '../../support/platforms/FakeSlackEvents.js';
import { FakeSlackServer, SLACK_TOKEN } from '../../support/platforms/FakeSlackServer.js';
import { startWebhookListener, type WebhookListener } from '../../support/webhookListener.js';

const NOW = '2026-11-22T10:00:00.000Z';

/** A `deliver` that records what it is given; `hold()` makes the next calls wait until released. */
class Receiver {
  readonly received: InboundMessage[] = [];
  failing: Error | null = null;
  private held: Array<() => void> | null = null;

  readonly deliver = async (message: InboundMessage): Promise<void> => {
    this.received.push(message);
    if (this.held !== null) await new Promise<void>((resolve) => this.held!.push(resolve));
    if (this.failing !== null) throw this.failing;
  };

  hold(): void {
    this.held = [];
  }

  /** Lets the deliveries waiting so far go on, and the later ones through at once. */
  release(): void {
    const waiting = this.held ?? [];
    this.held = null;
    for (const resolve of waiting) resolve();
  }

  texts(): string[] {
    return this.received.map((message) => message.text);
  }
}

/**
 * Resolves once the next request to the listener was read whole and the receiver went as far as
 * it can with it without waiting on `deliver` (reading the body is its only wait before that).
 */
function nextRequestRead(listener: WebhookListener): Promise<void> {
  return new Promise((resolve) => {
    listener.server.once('request', (req: import('node:http').IncomingMessage) => {
      req.once('end', () => setImmediate(resolve));
    });
  });
}

/** Resolves once `condition` holds, checking after each turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  for (let turns = 0; !condition(); turns++) {
    if (turns > 2000) throw new Error('the condition never held');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('the Slack receiver (Events API)', () => {
  let slack: FakeSlackServer;
  let clock: ManualClock;
  let logger: RecordingLogger;
  let source: SlackEventsSource;
  let listener: WebhookListener;
  let events: FakeSlackEvents;
  let receiver: Receiver;

  beforeEach(async () => {
    slack = await FakeSlackServer.start();
    clock = new ManualClock(NOW);
    logger = new RecordingLogger();
    source = createSlackEventsSource({
      botToken: SLACK_TOKEN,
      signingSecret: SLACK_SIGNING_SECRET,
      baseUrl: slack.url,
      clock,
      logger,
      maxBodyBytes: 64 * 1024,
    });
    listener = await startWebhookListener({ slackEvents: source.router, now: NOW });
    events = new FakeSlackEvents(listener.url, clock);
    receiver = new Receiver();
  });

  afterEach(async () => {
    receiver.release();
    await source.stop();
    await listener.close();
    await slack.close();
  });

  describe('before it starts', () => {
    it('answers 503 with Retry-After, so that Slack tries again later', async () => {
      const response = await events.post(events.envelope(events.directMessage('hello')));

      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('30');
    });
  });

  describe('once started', () => {
    beforeEach(async () => {
      await source.start(receiver.deliver);
    });

    it('learns the bot user with auth.test and the bot token', () => {
      expect(slack.callsTo('auth.test')).toEqual([
        expect.objectContaining({ method: 'POST', headers: expect.objectContaining({ authorization: `Bearer ${SLACK_TOKEN}` }) }),
      ]);
    });

    it('answers the url_verification challenge when it is signed', async () => {
      const response = await events.post({
        token: 'legacy',
        challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
        type: 'url_verification',
      });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    });

    describe('signatures', () => {
      it('refuses a request signed with another secret with 401 and one sentence, handing nothing over', async () => {
        const response = await events.post(events.envelope(events.directMessage('hello')), { secret: 'not-the-signing-secret' });

        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: 'The request does not carry a valid Slack signature made in the last 5 minutes.' });
        expect(receiver.received).toEqual([]);
      });

      it('refuses a request without a signature, and a url_verification too', async () => {
        const response = await events.post({ challenge: 'abc', type: 'url_verification' }, { signature: null });

        expect(response.status).toBe(401);
        expect(response.body).not.toHaveProperty('challenge');
      });

      it('refuses a body changed after signing', async () => {
        const body = JSON.stringify(events.envelope(events.directMessage('hello')));
        const timestamp = Math.floor(clock.now().getTime() / 1000);
        const signed = await events.post(body, { timestamp }).then((response) => response.status);
        const tampered = body.replace('hello', 'rm -rf');
        const { slackSignature } = await import('../../../src/adapters/inbound/slackSignature.js');

        const response = await events.post(tampered, {
          timestamp,
          signature: slackSignature(SLACK_SIGNING_SECRET, String(timestamp), body),
        });

        expect(signed).toBe(200);
        expect(response.status).toBe(401);
        expect(receiver.texts()).toEqual(['hello']);
      });

      it('refuses a timestamp more than 5 minutes off the clock, either way, and takes one within', async () => {
        const now = Math.floor(clock.now().getTime() / 1000);

        const old = await events.post(events.envelope(events.directMessage('replayed')), { timestamp: now - 301 });
        const ahead = await events.post(events.envelope(events.directMessage('from the future')), { timestamp: now + 301 });
        const late = await events.post(events.envelope(events.directMessage('a little late')), { timestamp: now - 290 });

        expect([old.status, ahead.status, late.status]).toEqual([401, 401, 200]);
        expect(receiver.texts()).toEqual(['a little late']);
      });

      it('logs one line while signatures are refused, naming the setting, and one when they are accepted again', async () => {
        await events.post(events.envelope(events.directMessage('a')), { secret: 'wrong' });
        await events.post(events.envelope(events.directMessage('b')), { secret: 'wrong' });
        await events.post(events.envelope(events.directMessage('c')));

        const lines = logger.entries.filter((entry) => entry.message.startsWith('slack events'));
        expect(lines.map((entry) => [entry.level, entry.message])).toEqual([
          [
            'warn',
            "slack events refused: its signature does not match; check that platforms.slack.signing_secret (or SLACK_SIGNING_SECRET) is the app's Signing Secret",
          ],
          ['info', 'slack events: signed requests are accepted again'],
        ]);
        expect(JSON.stringify(logger.entries)).not.toContain(SLACK_SIGNING_SECRET);
        expect(JSON.stringify(logger.entries)).not.toContain(SLACK_TOKEN);
      });
    });

    describe('what is handed over', () => {
      it('hands over a direct message as the chat itself, answering 200', async () => {
        const event = events.directMessage('What is on my calendar today?');

        const response = await events.post(events.envelope(event));

        expect(response.status).toBe(200);
        expect(receiver.received).toEqual([
          {
            conversation: { platform: 'slack', chatId: ALICE_DM, threadId: null },
            userId: ALICE,
            userName: null,
            messageId: event.ts,
            text: 'What is on my calendar today?',
          },
        ]);
      });

      it('keeps a direct message written in a thread in that thread', async () => {
        await events.post(events.envelope(events.directMessage('and tomorrow?', { thread_ts: '1795333333.000100' })));

        expect(receiver.received[0]!.conversation).toEqual({ platform: 'slack', chatId: ALICE_DM, threadId: '1795333333.000100' });
      });

      it('answers a top-level mention in a channel in a thread under it, without the mention', async () => {
        const event = events.mention(`<@${SLACK_BOT_USER}> deploy staging please`);

        await events.post(events.envelope(event));

        expect(receiver.received).toEqual([
          {
            conversation: { platform: 'slack', chatId: GENERAL, threadId: event.ts },
            userId: ALICE,
            userName: null,
            messageId: event.ts,
            text: 'deploy staging please',
          },
        ]);
      });

      it('keeps a mention written in a thread in that thread', async () => {
        const event = events.mention(`<@${SLACK_BOT_USER}> and prod?`, { thread_ts: '1795333333.000100' });

        await events.post(events.envelope(event));

        expect(receiver.received[0]!.conversation).toEqual({ platform: 'slack', chatId: GENERAL, threadId: '1795333333.000100' });
        expect(receiver.received[0]!.messageId).toBe(event.ts);
      });

      it('takes the mention out wherever it is, in either form, and reads back what Slack escaped', async () => {
        await events.post(
          events.envelope(events.mention(`is 3 &lt; 4 &amp;&amp; 5 &gt; 2, <@${SLACK_BOT_USER}|agent>? ask <@U0CAROL01> too`)),
        );
        await events.post(events.envelope(events.mention(`<@${SLACK_BOT_USER}>\n  summarise <https://example.com|this page>`)));

        expect(receiver.texts()).toEqual(['is 3 < 4 && 5 > 2, ? ask <@U0CAROL01> too', 'summarise <https://example.com|this page>']);
      });

      it('names the bot user from the envelope when Slack gives it there', async () => {
        await events.post(
          events.envelope(events.mention('<@U0OTHERBOT> hello'), { authorizations: [{ user_id: 'U0OTHERBOT', is_bot: true }] }),
        );

        expect(receiver.texts()).toEqual(['hello']);
      });

      it('gives the name Slack sends with the message, when it sends one', async () => {
        await events.post(
          events.envelope(events.directMessage('hi', { user_profile: { display_name: '', real_name: 'Alice Liddell', name: 'alice' } })),
        );

        expect(receiver.received[0]!.userName).toBe('Alice Liddell');
      });

      it('hands messages over one at a time, in the order they came', async () => {
        receiver.hold();
        const first = events.post(events.envelope(events.directMessage('first'))).then((response) => response.status);
        await until(() => receiver.received.length === 1);
        const read = nextRequestRead(listener);
        const second = events.post(events.envelope(events.mention(`<@${SLACK_BOT_USER}> second`))).then((response) => response.status);
        await read;

        expect(receiver.texts()).toEqual(['first']);
        receiver.release();
        expect(await Promise.all([first, second])).toEqual([200, 200]);
        expect(receiver.texts()).toEqual(['first', 'second']);
      });
    });

    describe('what is not handed over', () => {
      it.each([
        ['a message in a channel (its app_mention is taken)', () => events.channelMessage(`<@${SLACK_BOT_USER}> hi`)],
        ['a message in a group direct message', () => events.channelMessage('hi all', { channel: 'G0GROUP001', channel_type: 'mpim' })],
        ["another bot's message", () => events.directMessage('beep', { bot_id: 'B0OTHER', user: 'U0OTHERBOT' })],
        ["another bot's mention", () => events.mention(`<@${SLACK_BOT_USER}> beep`, { bot_id: 'B0OTHER', user: 'U0OTHERBOT' })],
        ['an edit', () => events.directMessage('', { subtype: 'message_changed', message: { text: 'edited' } })],
        ['a join', () => events.mention(`<@${SLACK_BOT_USER}> has joined`, { subtype: 'channel_join' })],
        ["the bot's own message", () => events.directMessage('Here is your answer', { user: SLACK_BOT_USER })],
        [
          'a mention in a direct message (its message event is taken)',
          () => events.mention(`<@${SLACK_BOT_USER}> hi`, { channel: ALICE_DM }),
        ],
        ['a mention and nothing else', () => events.mention(`<@${SLACK_BOT_USER}>  `)],
        [
          'another kind of event',
          () => ({ type: 'reaction_added', user: ALICE, reaction: 'thumbsup', item: { type: 'message', channel: GENERAL, ts: '1.2' } }),
        ],
      ])('ignores %s with 200', async (_what, event) => {
        const response = await events.post(events.envelope(event()));

        expect(response.status).toBe(200);
        expect(response.body).toEqual({ status: 'ignored' });
        expect(receiver.received).toEqual([]);
      });

      it('answers 400 to a signed body that is not JSON', async () => {
        const response = await events.post('token=x&team_id=T0ACME');

        expect(response.status).toBe(400);
        expect(receiver.received).toEqual([]);
      });

      it('refuses a body over the size limit with 413', async () => {
        const response = await events.post(events.envelope(events.directMessage('x'.repeat(70 * 1024))));

        expect(response.status).toBe(413);
        expect(receiver.received).toEqual([]);
      });
    });

    describe("Slack's retries", () => {
      it('answers a retry of an event already handed over with 200 and does not hand it over again', async () => {
        const envelope = events.envelope(events.directMessage('once only'));
        await events.post(envelope);
        clock.advance(60_000);

        const retry = await events.post(envelope, { headers: { 'X-Slack-Retry-Num': '1', 'X-Slack-Retry-Reason': 'http_timeout' } });

        expect(retry.status).toBe(200);
        expect(retry.body).toEqual({ status: 'duplicate' });
        expect(receiver.texts()).toEqual(['once only']);
      });

      it('does not hand over the same message twice under another event id', async () => {
        const message = events.directMessage('same message');
        await events.post(events.envelope(message));

        await events.post(events.envelope(message));

        expect(receiver.texts()).toEqual(['same message']);
      });

      it("still knows an event half an hour later, past the last of Slack's retries", async () => {
        const envelope = events.envelope(events.directMessage('remembered'));
        await events.post(envelope);
        clock.advance(30 * 60_000);

        await events.post(envelope, { headers: { 'X-Slack-Retry-Num': '3' } });

        expect(receiver.texts()).toEqual(['remembered']);
      });

      it('lets a retry that comes while the event is being handed over wait for it, handing it over once', async () => {
        receiver.hold();
        const envelope = events.envelope(events.directMessage('slow'));
        const first = events.post(envelope).then((response) => response.status);
        await until(() => receiver.received.length === 1);
        const read = nextRequestRead(listener);
        const retry = events.post(envelope, { headers: { 'X-Slack-Retry-Num': '1' } }).then((response) => response.status);
        await read;

        receiver.release();

        expect(await Promise.all([first, retry])).toEqual([200, 200]);
        expect(receiver.texts()).toEqual(['slow']);
      });

      it('answers 503 when the message cannot be handed over, and hands it over on the retry', async () => {
        const envelope = events.envelope(events.directMessage('try again'));
        receiver.failing = new Error('the conversation store is down');

        const failed = await events.post(envelope);
        receiver.failing = null;
        const retried = await events.post(envelope, { headers: { 'X-Slack-Retry-Num': '1' } });

        expect(failed.status).toBe(503);
        expect(failed.headers['retry-after']).toBe('30');
        expect(retried.status).toBe(200);
        expect(receiver.texts()).toEqual(['try again', 'try again']);
        expect(
          logger.entries.filter(
            (entry) => entry.level !== 'debug' && entry.message.startsWith('slack: ') && !entry.message.includes('receiving'),
          ),
        ).toEqual([
          {
            level: 'warn',
            message: 'slack: a message could not be handed over; Slack will send it again',
            fields: { error: 'the conversation store is down' },
          },
          { level: 'info', message: 'slack: messages are handed over again', fields: undefined },
        ]);
      });
    });

    describe('stop()', () => {
      it('waits for the message being handed over, refuses the queued one with 503, then answers 503 to everything', async () => {
        receiver.hold();
        const first = events.post(events.envelope(events.directMessage('in hand'))).then((response) => response.status);
        await until(() => receiver.received.length === 1);
        const read = nextRequestRead(listener);
        const queued = events.post(events.envelope(events.directMessage('queued'))).then((response) => response.status);
        await read;

        let stopped = false;
        const stopping = source.stop().then(() => (stopped = true));
        await new Promise((resolve) => setImmediate(resolve));
        expect(stopped).toBe(false);
        receiver.release();
        await stopping;

        expect(await Promise.all([first, queued])).toEqual([200, 503]);
        const after = await events.post(events.envelope(events.directMessage('after')));
        expect(after.status).toBe(503);
        expect(after.headers['retry-after']).toBe('30');
        expect(receiver.texts()).toEqual(['in hand']);
      });

      it('after a restart, a retry of an event handed over before is still not handed over again', async () => {
        const envelope = events.envelope(events.directMessage('before the restart'));
        await events.post(envelope);
        await source.stop();
        await source.start(receiver.deliver);

        await events.post(envelope, { headers: { 'X-Slack-Retry-Num': '2' } });
        await events.post(events.envelope(events.directMessage('after the restart')));

        expect(receiver.texts()).toEqual(['before the restart', 'after the restart']);
      });
    });

    it('does nothing for typing: Slack has no typing sign for bots', async () => {
      const before = slack.requests.length;

      await source.typing({ platform: 'slack', chatId: ALICE_DM, threadId: null });

      expect(slack.requests.length).toBe(before);
    });
  });

  describe('on the listener', () => {
    it('answers other methods on /slack/events with 405', async () => {
      const response = await request(listener.url).get('/slack/events');

      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
    });

    it('leaves other paths to the 404 and the webhook routes as they were', async () => {
      expect((await request(listener.url).post('/slack/other').send('{}')).status).toBe(404);
      expect((await request(listener.url).get('/health')).status).toBe(200);
    });

    it('is not served when no receiver is mounted', async () => {
      const plain = await startWebhookListener({ now: NOW });
      try {
        const response = await new FakeSlackEvents(plain.url, clock).post({ challenge: 'abc', type: 'url_verification' });
        expect(response.status).toBe(404);
      } finally {
        await plain.close();
      }
    });
  });

  describe('start()', () => {
    it('rejects with one sentence naming SLACK_BOT_TOKEN when Slack refuses the token', async () => {
      const refused = createSlackEventsSource({
        botToken: 'xoxb-wrong-token-value',
        signingSecret: SLACK_SIGNING_SECRET,
        baseUrl: slack.url,
        clock,
        logger,
      });

      const error = await refused.start(receiver.deliver).then(
        () => new Error('started'),
        (thrown: unknown) => thrown as Error,
      );

      expect(error.message).toBe(
        'The Slack receiver cannot start: auth.test failed (invalid_auth); check platforms.slack.bot_token (or SLACK_BOT_TOKEN) and that platforms.slack.base_url (or SLACK_BASE_URL) reaches Slack.',
      );
      expect(error.message).not.toContain('xoxb-wrong-token-value');
    });

    it('rejects naming SLACK_BOT_TOKEN when Slack cannot be reached', async () => {
      const address = slack.url;
      await slack.close();
      const unreachable = createSlackEventsSource({
        botToken: SLACK_TOKEN,
        signingSecret: SLACK_SIGNING_SECRET,
        baseUrl: address,
        clock,
        logger,
      });

      await expect(unreachable.start(receiver.deliver)).rejects.toThrow(
        /^The Slack receiver cannot start: auth\.test failed \(could not reach slack at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\); check platforms\.slack\.bot_token \(or SLACK_BOT_TOKEN\)/,
      );
    });

    it('rejects when auth.test answers without a bot user, as a proxy page would', async () => {
      slack.answerNextWhoAmI('anonymous');

      await expect(source.start(receiver.deliver)).rejects.toThrow(/auth\.test failed \(<html><body>Welcome<\/body><\/html>\)/);
      expect((await events.post(events.envelope(events.directMessage('hello')))).status).toBe(503);
    });

    it('rejects without a signing secret, naming SLACK_SIGNING_SECRET, before contacting Slack', async () => {
      const unsigned = createSlackEventsSource({ botToken: SLACK_TOKEN, signingSecret: '', baseUrl: slack.url, clock, logger });

      await expect(unsigned.start(receiver.deliver)).rejects.toThrow(
        "The Slack receiver needs the app's Signing Secret in platforms.slack.signing_secret (or SLACK_SIGNING_SECRET); copy it from the app's Basic Information page.",
      );
      expect(slack.callsTo('auth.test')).toEqual([]);
    });
  });
});
