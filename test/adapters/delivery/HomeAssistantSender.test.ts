import { PlatformSendError, type ChatAddress } from '../../../src/application/ports/PlatformSender.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { createSender } from '../../../src/adapters/delivery/HomeAssistantSender.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import { EVALUATED, FakeHomeAssistantServer, HOME_ASSISTANT_TOKEN, render } from '../../support/platforms/FakeHomeAssistantServer.js';

const PHONE: ChatAddress = { chatId: 'mobile_app_pixel_7', threadId: null };
const PANEL: ChatAddress = { chatId: 'persistent_notification', threadId: null };
const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;

describe('HomeAssistantSender', () => {
  let fake: FakeHomeAssistantServer;
  beforeEach(async () => {
    fake = await FakeHomeAssistantServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  function settingsWith(settings: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}) {
    return platformSettings('homeassistant', { ...fake.settings, ...settings }, env, PLATFORM_SPECS.homeassistant!.defaults);
  }
  const senderWith = (settings: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}) => createSender(settingsWith(settings, env));

  async function failureOf(promise: Promise<unknown>): Promise<PlatformSendError> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PlatformSendError);
    return error as PlatformSendError;
  }

  describe('calling a notify action', () => {
    it('posts the message to /api/services/notify/<service> with the bearer token and counts the list of changed states as the confirmation', async () => {
      const sent = await senderWith().send(PHONE, 'The garage door is open.', 'job-1.1');

      expect(sent).toEqual({ messageId: 'job-1.1' });
      const [request] = fake.sends;
      expect(request!.method).toBe('POST');
      expect(request!.path).toBe('/api/services/notify/mobile_app_pixel_7');
      expect(request!.headers.authorization).toBe(`Bearer ${HOME_ASSISTANT_TOKEN}`);
      expect(request!.headers['content-type']).toMatch(/^application\/json/);
      expect(request!.body).toEqual({ message: 'The garage door is open.' });
    });

    it('adds the configured title', async () => {
      await senderWith({ title: 'Agent' }).send(PHONE, 'with a title', 'k');
      expect(fake.sends[0]!.body).toEqual({ message: 'with a title', title: 'Agent' });
    });

    it('takes a destination written as notify.<service>', async () => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver(targetOf('homeassistant:notify.mobile_app_ipad'), 'on the iPad');
      expect(fake.sends[0]!.path).toBe('/api/services/notify/mobile_app_ipad');
    });

    it('takes url with or without a trailing /api', async () => {
      await senderWith({ url: `${fake.url}/api/` }).send(PHONE, 'suffix pasted too', 'k');
      expect(fake.delivered).toEqual(['suffix pasted too']);
    });

    it('takes the url and token from HOMEASSISTANT_* variables over config, and waits 30 s for an answer by default', async () => {
      const settings = settingsWith(
        { url: 'http://127.0.0.1:1', token: 'config-token' },
        { HOMEASSISTANT_URL: fake.url, HOMEASSISTANT_TOKEN: HOME_ASSISTANT_TOKEN },
      );
      expect(settings.timeoutMs).toBe(30_000);
      await createSender(settings).send(PHONE, 'from the environment', 'k');
      expect(fake.delivered).toEqual(['from the environment']);
    });
  });

  describe('persistent_notification', () => {
    it("delivers the bare name to the home channel, Home Assistant's notification panel here, with the part key as the notification id", async () => {
      const { delivery } = deliveryOver(fake);
      const receipt = await delivery.deliver(targetOf('homeassistant'), 'In the panel.');
      expect(fake.sends[0]!.path).toBe('/api/services/notify/persistent_notification');
      expect(fake.sends[0]!.body).toEqual({ message: 'In the panel.', data: { notification_id: receipt.messageIds[0] } });
      expect([...fake.notifications]).toEqual([[receipt.messageIds[0], { message: 'In the panel.' }]]);
    });

    it('replaces rather than adds when the same part is sent again after a lost answer', async () => {
      const sender = senderWith();
      await sender.send(PANEL, 'once', 'delivery-7.1');
      await sender.send(PANEL, 'once', 'delivery-7.1');
      await sender.send(PANEL, 'next part', 'delivery-7.2');
      expect(fake.attempts).toBe(3);
      expect([...fake.notifications.keys()]).toEqual(['delivery-7.1', 'delivery-7.2']);
    });

    it('refuses the bare name without a home channel instead of picking an action', () => {
      const { delivery } = deliveryOver(fake, { home_channel: '' });
      expect(delivery.problemWith(targetOf('homeassistant'))).toBe(
        'Delivery platform "homeassistant" has no home channel: set platforms.homeassistant.home_channel (or HOMEASSISTANT_HOME_CHANNEL), or name the destination as homeassistant:<chat_id>.',
      );
    });
  });

  describe('templates', () => {
    it('sends an answer that quotes template syntax so that Home Assistant shows it as written instead of evaluating it', async () => {
      const text = "Lock state: {{ states('lock.front_door') }} {% if true %}yes{% endif %} {# note #} {'a': 1}";
      await senderWith({ title: 'Report {{ now() }}' }).send(PANEL, text, 'k');

      expect(fake.sends[0]!.body.message).not.toBe(text);
      expect(render(text)).toContain(EVALUATED); // what Home Assistant would have done with it
      expect(fake.delivered).toEqual([text]);
      expect(fake.notifications.get('k')).toEqual({ message: text, title: 'Report {{ now() }}' });
    });

    it('sends a text without template marks unchanged, braces and all', async () => {
      await senderWith().send(PHONE, 'JSON: {"ok": true} and a } alone', 'k');
      expect(fake.sends[0]!.body.message).toBe('JSON: {"ok": true} and a } alone');
    });
  });

  describe('destinations Home Assistant cannot deliver to', () => {
    it.each([
      ['Mobile App Pixel', /lowercase letters, digits and underscores/],
      ['persistent_notification.create', /lowercase letters, digits and underscores/],
      ['send_message', /needs a notify entity/],
    ])('refuses homeassistant:%s before anything is sent', async (destination, why) => {
      const { delivery } = deliveryOver(fake);
      const target = targetOf(`homeassistant:${destination}`);
      expect(delivery.problemWith(target)).toMatch(
        new RegExp(`^Delivery target "homeassistant:${destination.replace(/\./g, '\\.')}" cannot be delivered: `),
      );
      expect(delivery.problemWith(target)).toMatch(why);
      await expect(delivery.deliver(target, 'hello')).rejects.toThrow(DeliveryError);
      expect(fake.requests).toEqual([]);
    });

    it('refuses a thread, which notifications do not have', () => {
      const { delivery } = deliveryOver(fake);
      const target: PlatformTarget = { kind: 'platform', platform: 'homeassistant', destination: 'mobile_app_pixel_7', threadId: '42' };
      expect(delivery.problemWith(target)).toMatch(/cannot be delivered: Home Assistant notifications have no threads/);
    });

    it('refuses an invalid name in the sender too, without calling Home Assistant', async () => {
      const error = await failureOf(senderWith().send({ chatId: 'notify.Mobile', threadId: null }, 'x', 'k'));
      expect(error.message).toMatch(/^homeassistant cannot deliver to "notify\.Mobile": /);
      expect(fake.requests).toEqual([]);
    });
  });

  describe("Home Assistant's answers", () => {
    it('fails at once, naming the action, when Home Assistant has no such notify action (HTTP 400)', async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await delivery.deliver(targetOf('homeassistant:mobile_app_old_phone'), 'hello?').catch((caught: unknown) => caught);
      expect((error as Error).message).toBe(
        "homeassistant refused the message (HTTP 400: 400: Bad Request); Home Assistant has no action notify.mobile_app_old_phone, or it refused the message's fields: look for it under Developer tools → Actions",
      );
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('names the token, and never prints it, when Home Assistant refuses it', async () => {
      const wrongToken = 'eyJwrong.token.value';
      const { delivery, target } = deliveryOver(fake, { token: wrongToken });
      const error = await delivery.deliver(target, 'who am I').catch((caught: unknown) => caught);
      expect((error as Error).message).toBe(
        'homeassistant refused the credentials (HTTP 401: 401: Unauthorized); check platforms.homeassistant.token (or HOMEASSISTANT_TOKEN)',
      );
      expect((error as Error).message).not.toContain(wrongToken);
    });

    it('says how to lift a ban when Home Assistant answers 403', async () => {
      fake.oddConfirmation = { status: 403, text: '403: Forbidden' };
      const error = await failureOf(senderWith().send(PHONE, 'x', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(
        /^homeassistant refused access \(HTTP 403: 403: Forbidden\); check platforms\.homeassistant\.token .*ip_bans\.yaml/,
      );
    });

    it('says to check url when there is no API at that address (HTTP 404)', async () => {
      const error = await failureOf(senderWith({ url: `${fake.url}/lovelace` }).send(PHONE, 'x', 'k'));
      expect(error.message).toMatch(
        /^homeassistant has no API at that address \(HTTP 404: 404: Not Found\); check that platforms\.homeassistant\.url/,
      );
    });

    it('retries an action that failed inside Home Assistant (HTTP 500) and points at its log', async () => {
      fake.failNext({ failure: 'unavailable' });
      const { delivery, target, log, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'second try');
      expect(timer.waits).toEqual([1000]);
      expect(log.entries[0]!.message).toMatch(
        /homeassistant is unavailable \(HTTP 500: .*\); the action notify\.mobile_app_pixel_7 failed, and Home Assistant's log/,
      );
      expect(fake.delivered).toEqual(['second try']);
    });

    it.each([
      ['a JSON object', { status: 200, json: { message: 'API running.' } }],
      ['a login page from a proxy', { status: 200, text: '<html><body>Sign in</body></html>' }],
      ['an empty 204', { status: 204, text: '' }],
    ])('does not count %s as delivered: only the list of changed states confirms', async (_what, answer) => {
      fake.oddConfirmation = answer;
      const error = await failureOf(senderWith().send(PHONE, 'maybe', 'k'));
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(/^homeassistant answered HTTP 20[04] without confirming the message/);
    });

    it('cuts the token out of whatever comes back', async () => {
      fake.oddConfirmation = { status: 400, text: `400: Bad Request (token ${HOME_ASSISTANT_TOKEN})` };
      const error = await failureOf(senderWith().send(PHONE, 'x', 'k'));
      expect(error.message).toContain('(token ***)');
      expect(error.message).not.toContain(HOME_ASSISTANT_TOKEN);
    });
  });

  describe('the credentials check (GET /api/config)', () => {
    const config = (request: { method: string; path: string }) => request.method === 'GET' && request.path === '/api/config';

    it('names the home and its version', async () => {
      await expect(senderWith().whoAmI!()).resolves.toBe('Home (Home Assistant 2026.11.1)');
      expect(fake.delivered).toEqual([]);
    });

    it('says Home Assistant is unavailable and points at its log, without a notify action, on HTTP 500', async () => {
      fake.answerNextRequest(config, { status: 500, text: '500 Internal Server Error' });
      const error = await failureOf(senderWith().whoAmI!());
      expect(error.kind).toBe('unavailable');
      expect(error.message).toBe(
        "homeassistant is unavailable (HTTP 500: 500 Internal Server Error); Home Assistant's log (Settings → System → Logs) says why",
      );
    });

    it('speaks of the credentials check, not of a message or an action, on HTTP 400', async () => {
      fake.answerNextWhoAmI('refused');
      const error = await failureOf(senderWith().whoAmI!());
      expect(error.kind).toBe('refused');
      expect(error.message).toBe('homeassistant refused the credentials check (HTTP 400: 400: Bad Request)');
    });

    it('says the answer named no home when the config lacks location_name', async () => {
      fake.answerNextWhoAmI('anonymous');
      const error = await failureOf(senderWith().whoAmI!());
      expect(error.kind).toBe('refused');
      expect(error.message).toMatch(/^homeassistant answered HTTP 200 without naming the account \(/);
    });

    it('keeps the ban hint on HTTP 403, which is about the token and this host, not a message', async () => {
      fake.answerNextRequest(config, { status: 403, text: '403: Forbidden' });
      const error = await failureOf(senderWith().whoAmI!());
      expect(error.message).toMatch(/^homeassistant refused access \(HTTP 403: 403: Forbidden\); check platforms\.homeassistant\.token/);
    });
  });
});
