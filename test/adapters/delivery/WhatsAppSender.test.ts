import { PlatformSendError, type ChatAddress } from '../../../src/application/ports/PlatformSender.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { ConfiguredPlatforms } from '../../../src/adapters/delivery/ConfiguredPlatforms.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { createSender } from '../../../src/adapters/delivery/WhatsAppSender.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import {
  FakeWhatsAppServer,
  graphError,
  NOT_ALLOWED,
  NOT_ON_WHATSAPP,
  WHATSAPP_ACCESS_TOKEN,
  WHATSAPP_API_VERSION,
  WHATSAPP_PHONE_NUMBER_ID,
} from '../../support/platforms/FakeWhatsAppServer.js';

const PERSON: ChatAddress = { chatId: '+14155550123', threadId: null };
const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;

describe('WhatsAppSender', () => {
  let fake: FakeWhatsAppServer;
  beforeEach(async () => {
    fake = await FakeWhatsAppServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  function senderWith(settings: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}) {
    return createSender(platformSettings('whatsapp', { ...fake.settings, ...settings }, env, PLATFORM_SPECS.whatsapp!.defaults));
  }

  async function failureOf(promise: Promise<unknown>): Promise<PlatformSendError> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PlatformSendError);
    return error as PlatformSendError;
  }

  describe('sending', () => {
    it('posts a text message to the phone number id with the bearer token, the number without +, and keeps the wamid Meta gives', async () => {
      const sent = await senderWith().send(PERSON, 'The build is green.', 'job-1.1');

      expect(sent.messageId).toMatch(/^wamid\./);
      const [request] = fake.sends;
      expect(request!.method).toBe('POST');
      expect(request!.path).toBe(`/${WHATSAPP_API_VERSION}/${WHATSAPP_PHONE_NUMBER_ID}/messages`);
      expect(request!.headers.authorization).toBe(`Bearer ${WHATSAPP_ACCESS_TOKEN}`);
      expect(request!.headers['content-type']).toMatch(/^application\/json/);
      expect(request!.body).toEqual({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '14155550123',
        type: 'text',
        text: { body: 'The build is green.' },
      });
    });

    it.each(['14155550123@s.whatsapp.net', '14155550123@c.us'])('sends to the phone number of the WhatsApp address %s', async (jid) => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver(targetOf(`whatsapp:${jid}`), 'by address');
      expect(fake.sends[0]!.body.to).toBe('14155550123');
    });

    it('defaults to the Graph API v26.0 root and takes the credentials from WHATSAPP_* variables over config', async () => {
      expect(PLATFORM_SPECS.whatsapp!.defaults.base_url).toBe('https://graph.facebook.com/v26.0');
      const sender = senderWith(
        { access_token: 'token-from-config', phone_number_id: '999' },
        { WHATSAPP_ACCESS_TOKEN: WHATSAPP_ACCESS_TOKEN, WHATSAPP_PHONE_NUMBER_ID: WHATSAPP_PHONE_NUMBER_ID },
      );
      await sender.send(PERSON, 'from the environment', 'k');
      expect(fake.delivered).toEqual(['from the environment']);
    });

    it('is configured only with both the phone number id and the access token', () => {
      const missing = new ConfiguredPlatforms({ whatsapp: { phone_number_id: WHATSAPP_PHONE_NUMBER_ID } }, {}).status('whatsapp');
      expect(missing).toMatchObject({ configured: false, missing: [{ key: 'access_token', variable: 'WHATSAPP_ACCESS_TOKEN' }] });
      expect(new ConfiguredPlatforms({ whatsapp: fake.settings }, {}).status('whatsapp')!.configured).toBe(true);
    });
  });

  describe('destinations the Cloud API cannot address', () => {
    it.each([
      ['120363041234567890@g.us', /WhatsApp Web group/],
      ['85296354328816@lid', /linked-device id/],
      ['status@broadcast', /phone number only/],
    ])('refuses whatsapp:%s before anything is sent, never falling back to the home channel', async (destination, why) => {
      const { delivery } = deliveryOver(fake);
      const target = targetOf(`whatsapp:${destination}`);
      expect(delivery.problemWith(target)).toMatch(new RegExp(`^Delivery target "whatsapp:${destination}" cannot be delivered: `));
      expect(delivery.problemWith(target)).toMatch(why);
      await expect(delivery.deliver(target, 'hello')).rejects.toThrow(DeliveryError);
      expect(fake.requests).toEqual([]);
    });

    it('refuses a thread, which WhatsApp chats do not have', async () => {
      const { delivery } = deliveryOver(fake);
      const target: PlatformTarget = { kind: 'platform', platform: 'whatsapp', destination: '+14155550123', threadId: 'wamid.HBgLMTQx' };
      expect(delivery.problemWith(target)).toMatch(/cannot be delivered: WhatsApp chats have no threads/);
      expect(fake.requests).toEqual([]);
    });

    it('refuses a home channel that is a group the same way', () => {
      const { delivery } = deliveryOver(fake, { home_channel: '120363041234567890@g.us' });
      expect(delivery.problemWith(targetOf('whatsapp'))).toMatch(/cannot be delivered: it is a WhatsApp Web group/);
    });

    it('refuses a group in the sender too, without contacting Meta', async () => {
      const error = await failureOf(senderWith().send({ chatId: '120363041234567890@g.us', threadId: null }, 'x', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(/^whatsapp cannot deliver to "120363041234567890@g\.us": it is a WhatsApp Web group/);
      expect(fake.requests).toEqual([]);
    });
  });

  describe("Meta's error codes", () => {
    it('reports a rate limit that comes as HTTP 400 (code 130429) as rate-limiting', async () => {
      fake.failNext({ failure: 'rate_limited' });
      const error = await failureOf(senderWith().send(PERSON, 'x', 'k'));
      expect(error.kind).toBe('rate_limited');
      expect(error.message).toBe(
        'whatsapp is rate-limiting (HTTP 400: (#130429) Rate limit hit: Message failed to send because there were too many messages sent from this phone number in a short period of time)',
      );
    });

    it("waits Meta's 6 s pace after the pair rate limit to one person (131056)", async () => {
      fake.oddConfirmation = graphError(
        400,
        131056,
        '(#131056) (Business Account, Consumer Account) pair rate limit hit',
        'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.',
      );
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'not so fast');
      expect(timer.waits).toEqual([6000]);
      expect(fake.delivered).toEqual(['not so fast']);
    });

    it('counts the app call limit (code 4, HTTP 429) as rate-limiting too', async () => {
      fake.oddConfirmation = graphError(429, 4, '(#4) Application request limit reached');
      const error = await failureOf(senderWith().send(PERSON, 'x', 'k'));
      expect(error.kind).toBe('rate_limited');
    });

    it("fails at once in Meta's words, with what to do, when a test number may not send to the recipient (131030)", async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await delivery.deliver(targetOf(`whatsapp:+${NOT_ALLOWED}`), 'hello').catch((caught: unknown) => caught);
      expect((error as Error).message).toBe(
        'whatsapp refused the message (HTTP 400: (#131030) Recipient phone number not in allowed list: Add recipient phone number to recipient list and try again.); a test number sends only to the recipients listed under WhatsApp → API Setup in the Meta app',
      );
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('says why a number cannot get the message (131026)', async () => {
      const error = await failureOf(senderWith().send({ chatId: `+${NOT_ON_WHATSAPP}`, threadId: null }, 'x', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(/\(#131026\) Message Undeliverable.*; the number may not use WhatsApp/);
    });

    it('does not count a 200 that carries a Graph error as delivered (131047, outside the 24-hour window)', async () => {
      fake.oddConfirmation = graphError(
        200,
        131047,
        '(#131047) Re-engagement message',
        'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
      );
      const { delivery, target } = deliveryOver(fake);
      const error = await delivery.deliver(target, 'late').catch((caught: unknown) => caught);
      expect((error as Error).message).toMatch(
        /^whatsapp refused the message \(HTTP 200: \(#131047\) Re-engagement message: .*; more than 24 hours have passed since this person last wrote/,
      );
      expect(fake.delivered).toEqual([]);
    });

    it('retries an error Meta marks transient even in a 4xx answer', async () => {
      fake.oddConfirmation = graphError(400, 2, '(#2) Service temporarily unavailable', undefined, { is_transient: true });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'second try');
      expect(timer.waits).toEqual([1000]);
      expect(fake.delivered).toEqual(['second try']);
    });

    it('names the access token, and never prints it, when Meta refuses it', async () => {
      const wrongToken = 'EAAGwrongwrongwrongtoken';
      const { delivery, target } = deliveryOver(fake, { access_token: wrongToken });
      const error = await delivery.deliver(target, 'who am I').catch((caught: unknown) => caught);
      expect((error as Error).message).toBe(
        'whatsapp refused the credentials (HTTP 401: Invalid OAuth access token - Cannot parse access token); check platforms.whatsapp.access_token (or WHATSAPP_ACCESS_TOKEN)',
      );
      expect((error as Error).message).not.toContain(wrongToken);
      expect(fake.attempts).toBe(1);
    });

    it('names the phone number id when Meta does not know it', async () => {
      const error = await failureOf(senderWith({ phone_number_id: '123456789' }).send(PERSON, 'x', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(
        /^whatsapp refused the message \(HTTP 400: Unsupported post request\. Object with ID '123456789' does not exist.*\); check platforms\.whatsapp\.phone_number_id \(or WHATSAPP_PHONE_NUMBER_ID\)$/,
      );
    });

    it('says which permission the token lacks (code 10, HTTP 403)', async () => {
      fake.oddConfirmation = graphError(403, 10, '(#10) Application does not have permission for this action');
      const error = await failureOf(senderWith().send(PERSON, 'x', 'k'));
      expect(error.message).toMatch(
        /^whatsapp refused access \(HTTP 403: .*\); the access token needs the whatsapp_business_messaging permission/,
      );
    });

    it('cuts the token out of whatever Meta says', async () => {
      fake.oddConfirmation = graphError(400, 100, `(#100) Invalid parameter near ${WHATSAPP_ACCESS_TOKEN}`);
      const error = await failureOf(senderWith().send(PERSON, 'x', 'k'));
      expect(error.message).toContain('near ***');
      expect(error.message).not.toContain(WHATSAPP_ACCESS_TOKEN);
    });

    it('does not count an answer without a message id as delivered', async () => {
      fake.oddConfirmation = {
        status: 200,
        json: { messaging_product: 'whatsapp', contacts: [{ input: '14155550123', wa_id: '14155550123' }], messages: [] },
      };
      const error = await failureOf(senderWith().send(PERSON, 'maybe', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(/^whatsapp answered HTTP 200 without confirming the message/);
      expect(fake.delivered).toEqual([]);
    });
  });
});
