import { PlatformSendError, type ChatAddress } from '../../../src/application/ports/PlatformSender.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { createSender } from '../../../src/adapters/delivery/TwilioSmsSender.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import {
  FakeTwilioServer,
  NOT_A_MOBILE,
  TWILIO_ACCOUNT_SID,
  TWILIO_AUTH_TOKEN,
  TWILIO_FROM,
  TWILIO_MESSAGING_SERVICE_SID,
  UNSUBSCRIBED,
} from '../../support/platforms/FakeTwilioServer.js';

const PHONE: ChatAddress = { chatId: '+14155550123', threadId: null };

describe('TwilioSmsSender', () => {
  let fake: FakeTwilioServer;
  beforeEach(async () => {
    fake = await FakeTwilioServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  function senderWith(settings: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}) {
    return createSender(platformSettings('sms', { ...fake.settings, ...settings }, env, PLATFORM_SPECS.sms!.defaults));
  }

  async function failureOf(promise: Promise<unknown>): Promise<PlatformSendError> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PlatformSendError);
    return error as PlatformSendError;
  }

  it('creates a Message under the account with Basic auth and To, From and Body, and keeps the SID Twilio gives', async () => {
    const sent = await senderWith().send(PHONE, 'The build is green.', 'job-1.1');

    expect(sent.messageId).toMatch(/^SM[0-9a-f]{32}$/);
    const [request] = fake.sends;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe(`/2010-04-01/Accounts/${TWILIO_ACCOUNT_SID}/Messages.json`);
    expect(request!.headers.authorization).toBe(`Basic ${Buffer.from(`${TWILIO_ACCOUNT_SID}:${TWILIO_AUTH_TOKEN}`).toString('base64')}`);
    expect(request!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request!.body).toEqual({ To: '+14155550123', From: TWILIO_FROM, Body: 'The build is green.' });
  });

  it('lets a Messaging Service pick the sender when from is an MG… SID', async () => {
    await senderWith({ from: TWILIO_MESSAGING_SERVICE_SID }).send(PHONE, 'via the service', 'k');

    expect(fake.sends[0]!.body).toEqual({ To: '+14155550123', MessagingServiceSid: TWILIO_MESSAGING_SERVICE_SID, Body: 'via the service' });
  });

  it('takes the credentials and the sender from SMS_* environment variables over config', async () => {
    const sender = senderWith(
      { account_sid: 'AC-from-config', auth_token: 'config-token', from: '+19995550000' },
      { SMS_ACCOUNT_SID: TWILIO_ACCOUNT_SID, SMS_AUTH_TOKEN: TWILIO_AUTH_TOKEN, SMS_FROM: TWILIO_FROM },
    );

    await sender.send(PHONE, 'from the environment', 'k');

    expect(fake.delivered).toEqual(['from the environment']);
  });

  it('sends Markdown as the plain text a phone shows', async () => {
    const markdown = [
      '# Nightly report',
      '',
      '**3 jobs** failed, see *the log* or __the dashboard__ and ~~ignore~~ `deploy.sh`.',
      'Details: [build 42](https://ci.example.com/42) and ![chart](https://ci.example.com/c.png)',
      '```bash',
      'npm test -- **/*.ts',
      '```',
    ].join('\n');

    await senderWith().send(PHONE, markdown, 'k');

    expect(fake.delivered).toEqual([
      [
        'Nightly report',
        '',
        '3 jobs failed, see the log or the dashboard and ignore deploy.sh.',
        'Details: build 42 (https://ci.example.com/42) and chart (https://ci.example.com/c.png)',
        'npm test -- **/*.ts',
      ].join('\n'),
    ]);
  });

  it('leaves text that only looks like Markdown alone: inline code, snake_case and arithmetic', async () => {
    await senderWith().send(PHONE, 'Set `MAX_**RETRIES**` in my_config_file; 2 * 3 * 4 = 24 #not-a-heading', 'k');

    expect(fake.delivered).toEqual(['Set MAX_**RETRIES** in my_config_file; 2 * 3 * 4 = 24 #not-a-heading']);
  });

  it('keeps each part of a long Markdown answer numbered and within 1600 characters once stripped', async () => {
    const paragraph = (n: number) => `**Step ${n}** ${'run the *checks* again and read `the log` '.repeat(12)}`;
    const code = ['```sh', ...Array.from({ length: 40 }, (_, line) => `echo line ${line} with some output text`), '```'].join('\n');
    const text = [paragraph(1), code, paragraph(2), paragraph(3), paragraph(4)].join('\n\n');
    const { delivery, target } = deliveryOver(fake);

    const receipt = await delivery.deliver(target, text);

    const count = fake.delivered.length;
    expect(count).toBeGreaterThanOrEqual(3);
    expect(receipt.messageIds).toHaveLength(count);
    fake.delivered.forEach((part, index) => {
      expect(part.length).toBeLessThanOrEqual(1600);
      expect(part.endsWith(` (${index + 1}/${count})`)).toBe(true);
      expect(part).not.toMatch(/```|\*\*|`/);
    });
    expect(fake.delivered.join('\n').match(/echo line \d+/g)).toHaveLength(40);
  });

  it('names account_sid and auth_token, never the token, when Twilio refuses the credentials', async () => {
    const failure = await failureOf(senderWith({ auth_token: 'wrong-token-0123456789' }).send(PHONE, 'who am I', 'k'));

    expect(failure.kind).toBe('refused');
    expect(failure.message).toBe(
      'sms refused the credentials (HTTP 401: error 20003: Authenticate (https://www.twilio.com/docs/errors/20003)); ' +
        'check platforms.sms.account_sid (or SMS_ACCOUNT_SID) and platforms.sms.auth_token (or SMS_AUTH_TOKEN)',
    );
    expect(failure.message).not.toContain('wrong-token');
    expect(fake.delivered).toEqual([]);
  });

  it('counts a credentials answer for another account as refused credentials too', async () => {
    const failure = await failureOf(senderWith({ account_sid: 'ACffffffffffffffffffffffffffffffff' }).send(PHONE, 'x', 'k'));

    expect(failure.message).toMatch(/^sms refused the credentials .*20003.*check platforms\.sms\.account_sid/);
  });

  it.each([
    ['an invalid number', '+1234', /error 21211: The 'To' number \+1234 is not a valid phone number/],
    ['a landline', NOT_A_MOBILE, /error 21614: To number: \+15005550009, is not a mobile number/],
    ['a recipient who replied STOP', UNSUBSCRIBED, /error 21610: Attempt to send to unsubscribed recipient/],
  ])("refuses at once, in Twilio's words, a message to %s", async (_, number, words) => {
    const failure = await failureOf(senderWith().send({ chatId: number, threadId: null }, 'hello', 'k'));

    expect(failure.kind).toBe('refused');
    expect(failure.message).toMatch(/^sms refused the message \(HTTP 400: /);
    expect(failure.message).toMatch(words);
    expect(fake.delivered).toEqual([]);
  });

  it("refuses, in Twilio's words, a from number that is not on the account", async () => {
    const failure = await failureOf(senderWith({ from: '+14155559999' }).send(PHONE, 'hello', 'k'));

    expect(failure.kind).toBe('refused');
    expect(failure.message).toContain('error 21606: The From phone number +14155559999 is not a valid, SMS-capable inbound phone number');
  });

  it('fails the delivery after one attempt when Twilio refuses the number', async () => {
    fake.failNext({ failure: 'refused' });
    const { delivery, target, timer } = deliveryOver(fake);

    const error = (await delivery.deliver(target, 'nope').catch((caught: unknown) => caught)) as Error;

    expect(error.message).toContain("error 21211: The 'To' number +14155550123 is not a valid phone number.");
    expect(fake.attempts).toBe(1);
    expect(timer.waits).toEqual([]);
  });

  it('passes on the Retry-After of a 429 as the wait', async () => {
    fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 5 });

    const failure = await failureOf(senderWith().send(PHONE, 'busy', 'k'));

    expect(failure.kind).toBe('rate_limited');
    expect(failure.retryAfterMs).toBe(5000);
    expect(failure.message).toBe(
      'sms is rate-limiting (HTTP 429: error 20429: Too Many Requests (https://www.twilio.com/docs/errors/20429))',
    );
  });

  it('backs off 1 s after a 429 that gives no Retry-After, then delivers', async () => {
    fake.retryAfterHeader = false;
    fake.failNext({ failure: 'rate_limited' });
    const { delivery, target, timer } = deliveryOver(fake);

    await delivery.deliver(target, 'after the storm');

    expect(timer.waits).toEqual([1000]);
    expect(fake.delivered).toEqual(['after the storm']);
  });

  it('counts a Twilio server error as unavailable, so the part is tried again', async () => {
    fake.failNext({ failure: 'unavailable' });

    const failure = await failureOf(senderWith().send(PHONE, 'later', 'k'));

    expect(failure.kind).toBe('unavailable');
    expect(failure.message).toBe(
      'sms is unavailable (HTTP 500: error 20500: An internal server error has occurred (https://www.twilio.com/docs/errors/20500))',
    );
  });

  it('counts a gateway error page that is not JSON as unavailable', async () => {
    fake.oddConfirmation = { status: 502, text: '<html><body>502 Bad Gateway</body></html>' };

    const failure = await failureOf(senderWith().send(PHONE, 'later', 'k'));

    expect(failure.kind).toBe('unavailable');
    expect(failure.message).toContain('502 Bad Gateway');
  });

  it('does not count a message as delivered when Twilio answers without a message SID', async () => {
    fake.oddConfirmation = { status: 201, json: { status: 'queued', to: '+14155550123' } };

    const failure = await failureOf(senderWith().send(PHONE, 'lost?', 'k'));

    expect(failure.kind).toBe('refused');
    expect(failure.message).toMatch(/^sms answered HTTP 201 without confirming the message/);
  });

  it('does not count a message Twilio created already failed', async () => {
    const sid = `SM${'a'.repeat(32)}`;
    fake.oddConfirmation = { status: 201, json: { sid, status: 'failed', error_code: 30007, error_message: 'Message filtered' } };

    const failure = await failureOf(senderWith().send(PHONE, 'spam?', 'k'));

    expect(failure.kind).toBe('refused');
    expect(failure.message).toBe(`sms refused the message (Twilio marked ${sid} failed: Message filtered)`);
  });
});
