import { createSender } from '../../../src/adapters/delivery/BlueBubblesSender.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError, type ChatAddress } from '../../../src/application/ports/PlatformSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import {
  BLUEBUBBLES_CONTACT,
  BLUEBUBBLES_HOME,
  BLUEBUBBLES_PASSWORD,
  FakeBlueBubblesServer,
} from '../../support/platforms/FakeBlueBubblesServer.js';

const CONTACT: ChatAddress = { chatId: BLUEBUBBLES_CONTACT, threadId: null };
const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;

describe('BlueBubblesSender', () => {
  let fake: FakeBlueBubblesServer;
  beforeEach(async () => {
    fake = await FakeBlueBubblesServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  function senderWith(settings: Record<string, string> = {}) {
    return createSender(platformSettings('bluebubbles', { ...fake.settings, ...settings }, {}, PLATFORM_SPECS.bluebubbles!.defaults));
  }

  async function failureOf(promise: Promise<unknown>): Promise<PlatformSendError> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PlatformSendError);
    return error as PlatformSendError;
  }

  describe('the request BlueBubbles requires', () => {
    it('posts {chatGuid, tempGuid, message} to /api/v1/message/text with the password in the query and keeps the guid it answers', async () => {
      const sent = await senderWith().send(CONTACT, 'The build is green.', '0a1b2c3d4e5f.1');

      expect(sent).toEqual({ messageId: 'p:0/5F0C7A2E-0000-4000-8000-000000000001' });
      const [send] = fake.sends;
      expect(send!.method).toBe('POST');
      expect(send!.path).toBe('/api/v1/message/text');
      expect([...send!.query]).toEqual([['password', BLUEBUBBLES_PASSWORD]]);
      expect(send!.headers['content-type']).toMatch(/^application\/json/);
      expect(send!.body).toEqual({
        chatGuid: `iMessage;-;${BLUEBUBBLES_CONTACT}`,
        tempGuid: 'agent-0a1b2c3d4e5f.1',
        message: 'The build is green.',
      });
    });

    it('sends with the method set in config, and leaves it to the server otherwise', async () => {
      await senderWith({ method: 'private-api' }).send(CONTACT, 'fast', 'k.1');
      expect(fake.sends[0]!.body.method).toBe('private-api');
    });

    it('refuses a method BlueBubbles does not know, naming the setting', async () => {
      const error = await failureOf(senderWith({ method: 'carrier-pigeon' }).send(CONTACT, 'x', 'k'));
      expect(error.message).toBe(
        'bluebubbles cannot send with method "carrier-pigeon"; set platforms.bluebubbles.method (or BLUEBUBBLES_METHOD) to apple-script or private-api, or leave it out',
      );
      expect(fake.requests).toEqual([]);
    });

    it('takes a url pasted with /api/v1 on the end as well', async () => {
      await senderWith({ url: `${fake.url}/api/v1/` }).send(CONTACT, 'hi', 'k');
      expect(fake.sends[0]!.path).toBe('/api/v1/message/text');
    });

    it('waits for the server up to 130 s by default, as it answers only once Messages confirmed the send', () => {
      expect(platformSettings('bluebubbles', {}, {}, PLATFORM_SPECS.bluebubbles!.defaults).timeoutMs).toBe(130_000);
      expect(PLATFORM_SPECS.bluebubbles!.required).toEqual(['url', 'password']);
    });

    it('sends Markdown as the plain text iMessage shows', async () => {
      await senderWith().send(CONTACT, '**3 jobs** failed, see `deploy.sh` and [the log](https://ci.example.com/42)', 'k');
      expect(fake.delivered).toEqual(['3 jobs failed, see deploy.sh and the log (https://ci.example.com/42)']);
    });
  });

  describe('destinations', () => {
    it("uses a chat guid as it is, a group chat's included", async () => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver(targetOf('bluebubbles'), 'to the group');
      await delivery.deliver(targetOf(`bluebubbles:iMessage;-;${BLUEBUBBLES_CONTACT}`), 'to one person');
      expect(fake.sends.map((send) => send.body.chatGuid)).toEqual([BLUEBUBBLES_HOME, `iMessage;-;${BLUEBUBBLES_CONTACT}`]);
    });

    it("turns a phone number, written with spaces and dashes too, or an e-mail address into the direct chat's guid", async () => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver(targetOf('bluebubbles:+1 (415) 555-0199'), 'by number');
      await delivery.deliver(targetOf('bluebubbles:alice@example.com'), 'by e-mail');
      expect(fake.sends.map((send) => send.body.chatGuid)).toEqual(['iMessage;-;+14155550199', 'iMessage;-;alice@example.com']);
    });

    it('refuses at preflight what is neither a chat guid, a phone number nor an e-mail address', async () => {
      const { delivery } = deliveryOver(fake);
      const target = targetOf('bluebubbles:family group');
      expect(delivery.problemWith(target)).toBe(
        'Delivery target "bluebubbles:family group" cannot be delivered: bluebubbles cannot address "family group": use a chat guid (iMessage;-;+14155550123, iMessage;+;chat…), a phone number or an e-mail address.',
      );
      await expect(delivery.deliver(target, 'x')).rejects.toBeInstanceOf(DeliveryError);
      expect(fake.requests).toEqual([]);
    });

    it('refuses a home_channel it cannot address before anything is sent', async () => {
      const { delivery } = deliveryOver(fake, { home_channel: 'the family' });
      expect(delivery.problemWith(targetOf('bluebubbles'))).toMatch(
        /^Delivery target "bluebubbles:the family" cannot be delivered: bluebubbles cannot address "the family"/,
      );
    });

    it('refuses a thread id instead of dropping it', async () => {
      const error = await failureOf(senderWith().send({ chatId: BLUEBUBBLES_CONTACT, threadId: 'p:0/ABC' }, 'x', 'k'));
      expect(error.message).toBe(`bluebubbles has no threads; deliver to "${BLUEBUBBLES_CONTACT}" without thread "p:0/ABC".`);
      expect(fake.requests).toEqual([]);
    });
  });

  describe('what counts as delivered', () => {
    it('gives every attempt at a part the same tempGuid, derived from the idempotency key', async () => {
      fake.failNext({ failure: 'unavailable', times: 2 });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'third time');
      const tempGuids = fake.requests.map((request) => request.body.tempGuid);
      expect(tempGuids).toEqual(['agent-000000000001.1', 'agent-000000000001.1', 'agent-000000000001.1']);
      expect(timer.waits).toEqual([1000, 2000]);
    });

    it("does not count a 200 without the message's guid as delivered", async () => {
      fake.answerNextSendWith({ status: 200, json: { status: 200, message: 'Success' } });
      const error = await failureOf(senderWith().send(CONTACT, 'maybe', 'k'));
      expect(error.message).toBe('bluebubbles answered HTTP 200 without confirming the message ({"status":200,"message":"Success"})');
    });

    it('does not count an HTML page (a login portal in front of the server) as delivered', async () => {
      fake.answerNextSendWith({ status: 200, text: '<!doctype html><title>Sign in</title>' });
      const error = await failureOf(senderWith().send(CONTACT, 'maybe', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(/^bluebubbles answered HTTP 200 without confirming the message \(<!doctype html>/);
    });

    it('does not retry when Messages failed the send, which a retry could send twice, and quotes its error code', async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await delivery.deliver(targetOf('bluebubbles:+14155550000'), 'to nobody').catch((caught: unknown) => caught);
      expect((error as Error).message).toBe(
        'bluebubbles could not confirm the message was sent (HTTP 500: Message Send Error: Failed to send message! See attached message error code.: error 22); check the Messages app on the server',
      );
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('says so, and sends nothing again, when an earlier attempt with the same tempGuid is still being sent', async () => {
      fake.answerNextSendWith({
        status: 400,
        json: {
          status: 400,
          message: 'Bad Request',
          error: { type: 'Validation Error', message: 'Message is already queued to be sent! (Temp GUID: agent-k.1)' },
        },
      });
      const error = await failureOf(senderWith().send(CONTACT, 'again', 'k.1'));
      expect(error.kind).toBe('refused');
      expect(error.message).toBe(
        'bluebubbles is still sending an earlier attempt of this part (tempGuid agent-k.1); it was not sent again and may still arrive',
      );
    });

    it("refuses at once, in the server's words, a request it rejects", async () => {
      fake.failNext({ failure: 'refused' });
      const error = await failureOf(senderWith().send(CONTACT, 'x', 'k'));
      expect(error.message).toBe(
        "bluebubbles refused the message (HTTP 400: You've made a bad request! Please check your request params & body: Chat does not exist!)",
      );
    });
  });

  describe('the password', () => {
    it('names the password to check when the server refuses it, without printing it', async () => {
      const wrong = 'not the password';
      const { delivery, target } = deliveryOver(fake, { password: wrong });
      const error = await delivery.deliver(target, 'who am I').catch((caught: unknown) => caught);
      expect((error as Error).message).toBe(
        'bluebubbles refused the credentials (HTTP 401: You are not authorized to access this resource: Unauthorized); check platforms.bluebubbles.password (or BLUEBUBBLES_PASSWORD)',
      );
      expect((error as Error).message).not.toContain(wrong);
    });

    it('is cut out of an answer that echoes the request URL, in its URL-encoded form too', async () => {
      const encoded = new URLSearchParams({ password: BLUEBUBBLES_PASSWORD }).toString();
      fake.answerNextSendWith({
        status: 502,
        text: `<html>502 Bad Gateway: upstream failed for /api/v1/message/text?${encoded} (${encodeURIComponent(BLUEBUBBLES_PASSWORD)})</html>`,
      });
      const { delivery, target, log } = deliveryOver(fake);
      await delivery.deliver(target, 'through the tunnel');
      const warning = log.entries[0]!.message;
      expect(warning).toContain(
        'bluebubbles is unavailable (HTTP 502: <html>502 Bad Gateway: upstream failed for /api/v1/message/text?password=*** (***)</html>)',
      );
      for (const form of [BLUEBUBBLES_PASSWORD, encodeURIComponent(BLUEBUBBLES_PASSWORD), encoded.slice('password='.length)]) {
        expect(warning).not.toContain(form);
      }
    });

    it('is not in the error when the server cannot be reached', async () => {
      const port = new URL(fake.url).port;
      const sender = senderWith();
      await fake.close();
      const error = await failureOf(sender.send(CONTACT, 'x', 'k'));
      expect(error.kind).toBe('unavailable');
      expect(error.message).toBe(`could not reach bluebubbles at http://127.0.0.1:${port} (ECONNREFUSED)`);
      expect(error.cause).toBeUndefined();
    });

    it('is not in the error when url is not an address', async () => {
      const error = await failureOf(senderWith({ url: 'bluebubbles.local:1234' }).send(CONTACT, 'x', 'k'));
      expect(error.message).toBe(
        'bluebubbles cannot be reached at "bluebubbles.local:1234"; set platforms.bluebubbles.url (or BLUEBUBBLES_URL) to the server\'s address, e.g. http://192.168.1.20:1234',
      );
    });
  });
});
