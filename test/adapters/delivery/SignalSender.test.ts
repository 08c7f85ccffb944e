import { PlatformSendError, type ChatAddress, type PlatformSender } from '../../../src/application/ports/PlatformSender.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { createSender } from '../../../src/adapters/delivery/SignalSender.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import {
  FakeSignalCliServer,
  rpcError,
  rpcResult,
  SIGNAL_ACCOUNT,
  SIGNAL_DEAD_GROUP_ID,
  SIGNAL_GROUP_ID,
  SIGNAL_RECIPIENT,
  SIGNAL_UNREGISTERED,
} from '../../support/platforms/FakeSignalCliServer.js';

const toNumber = (chatId = SIGNAL_RECIPIENT): ChatAddress => ({ chatId, threadId: null });
const toGroup = (groupId = SIGNAL_GROUP_ID): ChatAddress => ({ chatId: `group:${groupId}`, threadId: null });

describe('SignalSender', () => {
  let fake: FakeSignalCliServer;
  beforeEach(async () => {
    fake = await FakeSignalCliServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  const senderWith = (overrides: Record<string, string> = {}): PlatformSender =>
    createSender(platformSettings('signal', { ...fake.settings, ...overrides }, {}, {}));

  const failureOf = async (sending: Promise<unknown>): Promise<PlatformSendError> => {
    const error = await sending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PlatformSendError);
    return error as PlatformSendError;
  };

  it('sends a message to a number as a JSON-RPC send with the account and a recipient list', async () => {
    await senderWith({ http_url: `${fake.url}/` }).send(toNumber(), 'Backup finished.', 'job-1.1');
    const [request] = fake.sends;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/api/v1/rpc');
    expect(request!.headers['content-type']).toMatch(/^application\/json/);
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toEqual({
      jsonrpc: '2.0',
      method: 'send',
      params: { account: SIGNAL_ACCOUNT, message: 'Backup finished.', recipient: [SIGNAL_RECIPIENT] },
      id: expect.any(String),
    });
  });

  it('sends a message to a group by its base64 id, without a recipient list', async () => {
    await senderWith().send(toGroup(), 'To the team.', 'job-1.1');
    expect(fake.sends[0]!.body.params).toEqual({ account: SIGNAL_ACCOUNT, message: 'To the team.', groupId: SIGNAL_GROUP_ID });
  });

  it('reports the Signal timestamp of the sent message as its id', async () => {
    fake.answerSendsWith((request) =>
      rpcResult(request.body.id, {
        timestamp: 1750000123456,
        results: [{ recipientAddress: { number: SIGNAL_RECIPIENT }, type: 'SUCCESS' }],
      }),
    );
    const sent = await senderWith().send(toNumber(), 'hello', 'job-1.1');
    expect(sent).toEqual({ messageId: '1750000123456' });
  });

  it('gives every request its own JSON-RPC id', async () => {
    const sender = senderWith();
    await sender.send(toNumber(), 'one', 'job-1.1');
    await sender.send(toNumber(), 'two', 'job-1.1');
    const [first, second] = fake.sends.map((request) => request.body.id);
    expect(first).not.toBe(second);
  });

  it('does not count an answer that echoes another request id as delivered', async () => {
    fake.answerSendsWith(() => rpcResult('someone-else', { timestamp: 1750000000001, results: [] }));
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toMatch(/^signal answered HTTP 200 without confirming the message/);
  });

  it('does not count an answer without a timestamp as delivered', async () => {
    fake.answerSendsWith((request) => rpcResult(request.body.id, {}));
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.message).toMatch(/without confirming the message/);
  });

  it('refuses a number that is not on Signal, naming it and why', async () => {
    const error = await failureOf(senderWith().send(toNumber(SIGNAL_UNREGISTERED), 'hello', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toBe(
      `signal refused the message (signal-cli error -1: Failed to send message: ${SIGNAL_UNREGISTERED} UNREGISTERED_FAILURE)`,
    );
  });

  it('does not count a group send that no member received as delivered', async () => {
    const error = await failureOf(senderWith().send(toGroup(SIGNAL_DEAD_GROUP_ID), 'anyone?', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toMatch(
      /^signal refused the message \(no recipient got the message: \+4915112345678 UNREGISTERED_FAILURE, \+4917600000001 UNREGISTERED_FAILURE\)$/,
    );
  });

  it('counts a group send that reached some members as delivered', async () => {
    fake.answerSendsWith((request) =>
      rpcResult(request.body.id, {
        timestamp: 1750000000042,
        results: [
          { recipientAddress: { number: '+4915112345678' }, groupId: SIGNAL_GROUP_ID, type: 'SUCCESS' },
          { recipientAddress: { number: '+4917600000001' }, groupId: SIGNAL_GROUP_ID, type: 'UNREGISTERED_FAILURE' },
        ],
      }),
    );
    expect(await senderWith().send(toGroup(), 'most of you', 'job-1.1')).toEqual({ messageId: '1750000000042' });
  });

  it("refuses a group the account is not in, in signal-cli's words", async () => {
    const error = await failureOf(senderWith().send(toGroup('bm90IGEgZ3JvdXA='), 'hello', 'job-1.1'));
    expect(error.message).toBe('signal refused the message (signal-cli error -1: Group not found: bm90IGEgZ3JvdXA=)');
  });

  it('reports a rate limit with the wait signal-cli passes on from Signal', async () => {
    fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 12 });
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('rate_limited');
    expect(error.retryAfterMs).toBe(12_000);
    expect(error.message).toBe(
      `signal is rate-limiting (signal-cli error -5: Failed to send message due to rate limiting: ${SIGNAL_RECIPIENT} RATE_LIMIT_FAILURE)`,
    );
  });

  it('waits the longest wait of a group whose every member was rate-limited, then delivers once', async () => {
    fake.answerSendsWith((request) =>
      rpcResult(request.body.id, {
        timestamp: 1750000000007,
        results: [
          { recipientAddress: { number: '+4915112345678' }, type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: 4 },
          { recipientAddress: { number: '+4917600000001' }, type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: 9 },
        ],
      }),
    );
    const { delivery, timer } = deliveryOver(fake);
    const receipt = await delivery.deliver(
      { kind: 'platform', platform: 'signal', destination: `group:${SIGNAL_GROUP_ID}`, threadId: null },
      'patience',
    );
    expect(timer.waits).toEqual([9000]);
    expect(receipt.messageIds).toHaveLength(1);
    expect(fake.attempts).toBe(2);
  });

  it("retries when signal-cli could not reach Signal's servers", async () => {
    fake.failNext({ failure: 'unavailable' });
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toBe(
      `signal-cli could not reach Signal's servers (signal-cli error -1: Failed to send message: ${SIGNAL_RECIPIENT} NETWORK_FAILURE)`,
    );
  });

  it('names platforms.signal.account when the daemon does not serve that account', async () => {
    const error = await failureOf(senderWith({ account: '+15559999999' }).send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toBe(
      'signal refused the credentials (signal-cli error -32602: Specified account does not exist); check platforms.signal.account (or SIGNAL_ACCOUNT)',
    );
  });

  it('names platforms.signal.account when the account is no longer registered with Signal', async () => {
    fake.answerSendsWith((request) => rpcError(request.body.id, -1, `User ${SIGNAL_ACCOUNT} is not registered.`));
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.message).toMatch(/^signal refused the credentials \(.*is not registered\.\); check platforms\.signal\.account/);
  });

  it("refuses invalid params in signal-cli's words", async () => {
    fake.answerSendsWith((request) => rpcError(request.body.id, -32602, 'Invalid phone number: +49 abc'));
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toBe('signal refused the message (signal-cli error -32602: Invalid phone number: +49 abc)');
  });

  it('refuses a recipient whose safety number changed until it is trusted again', async () => {
    fake.answerSendsWith((request) =>
      rpcError(request.body.id, -4, 'Failed to send message due to untrusted identities', {
        response: { timestamp: 1750000000003, results: [{ recipientAddress: { number: SIGNAL_RECIPIENT }, type: 'IDENTITY_FAILURE' }] },
      }),
    );
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toBe(
      `signal refused the message (signal-cli error -4: Failed to send message due to untrusted identities: ${SIGNAL_RECIPIENT} IDENTITY_FAILURE)`,
    );
  });

  it('retries when something in front of the daemon answers with a server error', async () => {
    fake.answerSendsWith(() => ({ status: 502, text: 'Bad Gateway' }));
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toBe('signal is unavailable (HTTP 502: Bad Gateway)');
  });

  it("says where to look when http_url does not point at the daemon's root", async () => {
    const error = await failureOf(senderWith({ http_url: `${fake.url}/signal` }).send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toBe(
      `signal refused the message (HTTP 404: no signal-cli JSON-RPC endpoint at ${fake.url}/signal/api/v1/rpc; check platforms.signal.http_url (or SIGNAL_HTTP_URL))`,
    );
  });

  it("says to use the daemon's own host name when it rejects the one in http_url", async () => {
    // fetch itself tries a 421 once more on a fresh connection, as HTTP allows; the daemon refuses both.
    fake.answerSendsWith(() => ({ status: 421 }), Infinity);
    const error = await failureOf(senderWith().send(toNumber(), 'hello', 'job-1.1'));
    expect(error.message).toMatch(
      /^signal refused the message \(HTTP 421: signal-cli accepts only the host name it listens on; use that address in platforms\.signal\.http_url/,
    );
  });

  it('reports a daemon that is not running as unreachable, with how to start it', async () => {
    const sender = senderWith();
    const address = fake.url;
    await fake.close();
    const error = await failureOf(sender.send(toNumber(), 'hello', 'job-1.1'));
    expect(error.kind).toBe('unavailable');
    expect(error.message.startsWith(`could not reach signal at ${address} (`)).toBe(true);
    expect(error.message.endsWith(`); is "signal-cli -a ${SIGNAL_ACCOUNT} daemon --http" running there?`)).toBe(true);
  });

  it('refuses a thread id instead of posting to the chat without it', async () => {
    const error = await failureOf(senderWith().send({ chatId: SIGNAL_RECIPIENT, threadId: '17' }, 'hello', 'job-1.1'));
    expect(error.kind).toBe('refused');
    expect(fake.attempts).toBe(0);
  });

  it('delivers a long answer to a group in parts of at most 8000 characters', async () => {
    const { delivery } = deliveryOver(fake);
    const receipt = await delivery.deliver({ kind: 'platform', platform: 'signal', destination: null, threadId: null }, 'x '.repeat(6000));
    expect(receipt.chatId).toBe(`group:${SIGNAL_GROUP_ID}`);
    expect(fake.delivered).toHaveLength(2);
    expect(fake.delivered.every((part) => part.length <= 8000)).toBe(true);
    expect(fake.sends.every((request) => request.body.params.groupId === SIGNAL_GROUP_ID)).toBe(true);
  });

  it("fails the delivery with signal-cli's reason for an unregistered number", async () => {
    const { delivery } = deliveryOver(fake);
    const target = { kind: 'platform' as const, platform: 'signal', destination: SIGNAL_UNREGISTERED, threadId: null };
    const error = await delivery.deliver(target, 'hello').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toContain('UNREGISTERED_FAILURE');
    expect(fake.attempts).toBe(1);
  });
});
