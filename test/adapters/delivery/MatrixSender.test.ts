import { createSender } from '../../../src/adapters/delivery/MatrixSender.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { PlatformSendError, type PlatformSender } from '../../../src/application/ports/PlatformSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver, longAnswer } from '../../contract/PlatformSender.contract.js';
import type { FakeAnswer, RecordedRequest } from '../../support/platforms/FakePlatformServer.js';
import { BOT_USER, FakeMatrixServer, MATRIX_TOKEN } from '../../support/platforms/FakeMatrixServer.js';

const ROOM = '!ops:example.org';
const ALICE = '@alice:example.org';

function senderFor(fake: FakeMatrixServer, overrides: Record<string, string> = {}): PlatformSender {
  return createSender(platformSettings('matrix', { ...fake.settings, ...overrides }, {}, {}));
}

function targetOf(text: string): PlatformTarget {
  return parseDeliveryTargets(text)[0] as PlatformTarget;
}

async function failureOf(promise: Promise<unknown>): Promise<PlatformSendError> {
  const error = await promise.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(PlatformSendError);
  return error as PlatformSendError;
}

const requestsTo = (fake: FakeMatrixServer, method: string, suffix: string): RecordedRequest[] =>
  fake.requests.filter((request) => request.method === method && request.path.endsWith(suffix));

describe('MatrixSender', () => {
  let fake: FakeMatrixServer;
  beforeEach(async () => {
    fake = await FakeMatrixServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  describe('sending a part', () => {
    it('puts an m.text event into the room with the access token as a bearer token and reports its event id', async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'Nightly backup finished.');
      expect(receipt).toEqual({ platform: 'matrix', chatId: ROOM, threadId: null, messageIds: ['$event1'] });
      const [send] = fake.sends;
      expect(send!.method).toBe('PUT');
      expect(send!.path).toBe('/_matrix/client/v3/rooms/!ops%3Aexample.org/send/m.room.message/000000000001.1');
      expect(send!.headers.authorization).toBe(`Bearer ${MATRIX_TOKEN}`);
      expect(send!.body).toEqual({ msgtype: 'm.text', body: 'Nightly backup finished.' });
    });

    it("uses the part's idempotency key as the transaction id, URL-encoded", async () => {
      await senderFor(fake).send({ chatId: ROOM, threadId: null }, 'hello', 'run 7/part#1');
      expect(fake.sends[0]!.path).toBe('/_matrix/client/v3/rooms/!ops%3Aexample.org/send/m.room.message/run%207%2Fpart%231');
      expect(fake.messages).toEqual([expect.objectContaining({ roomId: ROOM, txnId: 'run 7/part#1' })]);
    });

    it('stores a part once when its answer was lost and the retry repeats the transaction', async () => {
      fake.loseAnswers(1);
      const { delivery, target, timer } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'exactly once');
      expect(fake.attempts).toBe(2);
      expect(timer.waits).toEqual([1000]);
      expect(fake.messages).toHaveLength(1);
      expect(fake.delivered).toEqual(['exactly once']);
      expect(receipt.messageIds).toEqual([fake.messages[0]!.eventId]);
      const paths = requestsTo(fake, 'PUT', '000000000001.1').map((request) => request.path);
      expect(paths).toHaveLength(2);
    });

    it('gives every part of a long answer its own transaction, so no part replaces another', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, longAnswer(9000));
      expect(fake.messages.map((message) => message.txnId)).toEqual(['000000000001.1', '000000000001.2', '000000000001.3']);
    });

    it('posts into a thread as an m.thread relation with a reply fallback to its root', async () => {
      await senderFor(fake).send({ chatId: ROOM, threadId: '$root-event' }, 'in the thread', 'k1');
      expect(fake.sends[0]!.body).toEqual({
        msgtype: 'm.text',
        body: 'in the thread',
        'm.relates_to': {
          rel_type: 'm.thread',
          event_id: '$root-event',
          is_falling_back: true,
          'm.in_reply_to': { event_id: '$root-event' },
        },
      });
    });

    it('does not count a 200 answer without an event id as delivered', async () => {
      class ForgetfulHomeserver extends FakeMatrixServer {
        protected override confirm(): FakeAnswer {
          return { status: 200, json: {} };
        }
      }
      await fake.close();
      fake = await new ForgetfulHomeserver().start();
      const error = await failureOf(senderFor(fake).send({ chatId: ROOM, threadId: null }, 'lost?', 'k1'));
      expect(error.kind).toBe('refused');
      expect(error.message).toBe('matrix answered HTTP 200 without confirming the message ({})');
    });
  });

  describe('refusals', () => {
    it.each(['M_UNKNOWN_TOKEN', 'M_MISSING_TOKEN'] as const)(
      'names the access token setting when the homeserver answers %s',
      async (errcode) => {
        fake.unauthorizedErrcode = errcode;
        fake.failNext({ failure: 'unauthorized' });
        const error = await failureOf(senderFor(fake).send({ chatId: ROOM, threadId: null }, 'hi', 'k1'));
        expect(error.kind).toBe('refused');
        expect(error.message).toMatch(
          new RegExp(
            `^matrix refused the credentials \\(HTTP 401: ${errcode}: .+\\); check platforms\\.matrix\\.access_token \\(or MATRIX_ACCESS_TOKEN\\)$`,
          ),
        );
      },
    );

    it('is refused by the real token check when the token is wrong, without showing the token', async () => {
      const wrong = 'syt_wrong_token_do_not_print';
      const error = await failureOf(senderFor(fake, { access_token: wrong }).send({ chatId: ROOM, threadId: null }, 'hi', 'k1'));
      expect(error.message).toContain('M_UNKNOWN_TOKEN: Invalid access token passed.');
      expect(error.message).not.toContain(wrong);
      expect(fake.messages).toEqual([]);
    });

    it('says the bot is not in the room, not that the token is wrong, on M_FORBIDDEN, and does not retry', async () => {
      fake.rooms.set('!private:example.org', { joined: false });
      const { delivery, timer } = deliveryOver(fake);
      const error = (await delivery
        .deliver(targetOf('matrix:!private:example.org'), 'knock knock')
        .catch((caught: unknown) => caught)) as Error;
      expect(error.message).toBe(
        `matrix refused the message (HTTP 403: M_FORBIDDEN: User ${BOT_USER} not in room !private:example.org); the bot is not in room !private:example.org or may not post there: invite it and have it join`,
      );
      expect(error.message).not.toMatch(/credentials/);
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('waits retry_after_ms from the M_LIMIT_EXCEEDED body', async () => {
      fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 1.5 });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'slowly');
      expect(timer.waits).toEqual([1500]);
      expect(fake.messages).toHaveLength(1);
    });

    it("reports a rate limit with the homeserver's Retry-After header as the hint", async () => {
      fake.retryAfterHeader = true;
      fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 4 });
      const error = await failureOf(senderFor(fake).send({ chatId: ROOM, threadId: null }, 'hi', 'k1'));
      expect(error.kind).toBe('rate_limited');
      expect(error.retryAfterMs).toBe(4000);
      expect(error.message).toBe('matrix is rate-limiting (HTTP 429: M_LIMIT_EXCEEDED: Too Many Requests)');
    });

    it('retries a homeserver error and tells it apart from a refusal', async () => {
      fake.failNext({ failure: 'unavailable' });
      const error = await failureOf(senderFor(fake).send({ chatId: ROOM, threadId: null }, 'hi', 'k1'));
      expect(error.kind).toBe('unavailable');
      expect(error.message).toBe('matrix is unavailable (HTTP 500: M_UNKNOWN: Internal server error)');
    });

    it('refuses a destination that is neither a room id, a user id nor an alias', async () => {
      const error = await failureOf(senderFor(fake).send({ chatId: 'ops', threadId: null }, 'hi', 'k1'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(/matrix cannot address "ops"/);
      expect(fake.requests).toEqual([]);
    });
  });

  describe('room aliases', () => {
    it('posts to the room an alias points to', async () => {
      await senderFor(fake).send({ chatId: '#ops:example.org', threadId: null }, 'via alias', 'k1');
      expect(requestsTo(fake, 'GET', '/directory/room/%23ops%3Aexample.org')).toHaveLength(1);
      expect(fake.messages).toEqual([expect.objectContaining({ roomId: ROOM, content: { msgtype: 'm.text', body: 'via alias' } })]);
    });

    it('refuses an alias the homeserver does not know, saying so', async () => {
      const error = await failureOf(senderFor(fake).send({ chatId: '#nowhere:example.org', threadId: null }, 'hi', 'k1'));
      expect(error.kind).toBe('refused');
      expect(error.message).toBe(
        'matrix refused the message: unknown room alias #nowhere:example.org (HTTP 404: M_NOT_FOUND: Room alias #nowhere:example.org not found)',
      );
      expect(fake.attempts).toBe(0);
    });
  });

  describe('direct messages to a user', () => {
    it('creates one direct room for a user, records it in m.direct, and reuses it for every later part', async () => {
      const { delivery } = deliveryOver(fake);
      const target = targetOf(`matrix:${ALICE}`);
      const receipt = await delivery.deliver(target, longAnswer(6000));
      await delivery.deliver(target, 'and one more');
      expect(receipt.chatId).toBe(ALICE);
      expect(fake.createdRooms).toEqual([
        { roomId: '!dm1:example.org', body: { is_direct: true, invite: [ALICE], preset: 'trusted_private_chat' } },
      ]);
      expect(new Set(fake.messages.map((message) => message.roomId))).toEqual(new Set(['!dm1:example.org']));
      expect(fake.messages.length).toBeGreaterThanOrEqual(3);
      expect(fake.directRooms).toEqual({ [ALICE]: ['!dm1:example.org'] });
      expect(requestsTo(fake, 'GET', '/account/whoami')).toHaveLength(1);
      expect(requestsTo(fake, 'PUT', `/user/${encodeURIComponent(BOT_USER)}/account_data/m.direct`)).toHaveLength(1);
    });

    it('uses the direct room m.direct already lists for the user', async () => {
      fake.rooms.set('!alice-dm:example.org', {});
      fake.directRooms = { [ALICE]: ['!alice-dm:example.org'], '@bob:example.org': ['!bob-dm:example.org'] };
      await senderFor(fake).send({ chatId: ALICE, threadId: null }, 'hi Alice', 'k1');
      expect(fake.messages).toEqual([expect.objectContaining({ roomId: '!alice-dm:example.org' })]);
      expect(fake.createdRooms).toEqual([]);
    });

    it('creates a new direct room when the bot has left the one m.direct lists, keeping the other entries', async () => {
      fake.rooms.set('!old-dm:example.org', { joined: false });
      fake.directRooms = { [ALICE]: ['!old-dm:example.org'], '@bob:example.org': ['!bob-dm:example.org'] };
      await senderFor(fake).send({ chatId: ALICE, threadId: null }, 'hi again', 'k1');
      expect(fake.messages).toEqual([expect.objectContaining({ roomId: '!dm1:example.org' })]);
      expect(fake.directRooms).toEqual({
        [ALICE]: ['!old-dm:example.org', '!dm1:example.org'],
        '@bob:example.org': ['!bob-dm:example.org'],
      });
    });

    it('opens a fresh direct room on the next delivery after the bot was removed from the cached one', async () => {
      const sender = senderFor(fake);
      await sender.send({ chatId: ALICE, threadId: null }, 'first', 'k1');
      fake.rooms.set('!dm1:example.org', { joined: false });
      const error = await failureOf(sender.send({ chatId: ALICE, threadId: null }, 'second', 'k2'));
      expect(error.message).toMatch(/the bot is not in room !dm1:example\.org/);
      await sender.send({ chatId: ALICE, threadId: null }, 'third', 'k3');
      expect(fake.messages.map((message) => [message.roomId, message.content.body])).toEqual([
        ['!dm1:example.org', 'first'],
        ['!dm2:example.org', 'third'],
      ]);
    });

    it("names the access token when the homeserver refuses it while looking up the bot's own user", async () => {
      const error = await failureOf(
        senderFor(fake, { access_token: 'syt_revoked_token' }).send({ chatId: ALICE, threadId: null }, 'hi', 'k1'),
      );
      expect(error.message).toMatch(
        /^matrix refused the credentials \(HTTP 401: M_UNKNOWN_TOKEN: .*\); check platforms\.matrix\.access_token/,
      );
      expect(fake.createdRooms).toEqual([]);
    });
  });

  describe('listing channels', () => {
    it('lists joined rooms by canonical alias, else room name, else room id', async () => {
      fake.rooms.set('!elsewhere:example.org', { name: 'Not joined', joined: false });
      const channels = await senderFor(fake).listChannels!();
      expect(channels).toEqual([
        { id: '!ops:example.org', name: '#ops:example.org' },
        { id: '!home:example.org', name: 'Home' },
        { id: '!plain:example.org', name: '!plain:example.org' },
      ]);
      expect(
        requestsTo(fake, 'GET', '/state/m.room.canonical_alias').every(
          (request) => request.headers.authorization === `Bearer ${MATRIX_TOKEN}`,
        ),
      ).toBe(true);
    });

    it('names the access token when listing is refused', async () => {
      const error = await failureOf(senderFor(fake, { access_token: 'syt_revoked_token' }).listChannels!());
      expect(error.message).toMatch(/^matrix refused the credentials .*check platforms\.matrix\.access_token/);
    });
  });
});
