import { createSender, subjectOf } from '../../../src/adapters/delivery/EmailSender.js';
import { PLATFORM_SPECS } from '../../../src/adapters/delivery/platformCatalog.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { PlatformSendError } from '../../../src/application/ports/PlatformSender.js';
import { deliveryOver, longAnswer } from '../../contract/PlatformSender.contract.js';
import { FakeSmtpServer, SMTP_PASSWORD, SMTP_USERNAME, UNKNOWN_DOMAIN } from '../../support/platforms/FakeSmtpServer.js';

const failureOf = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => {
      throw new Error('expected the delivery to fail');
    },
    (error: unknown) => error as Error,
  );

/** A sender built from exactly these settings plus the catalog's defaults, nothing from the fake. */
function senderWith(section: Record<string, string>) {
  return createSender(platformSettings('email', section, {}, { ...PLATFORM_SPECS.email!.defaults }));
}

describe('EmailSender', () => {
  let fake: FakeSmtpServer;
  afterEach(async () => {
    await fake.close();
  });

  describe('the message', () => {
    beforeEach(async () => {
      fake = await FakeSmtpServer.start();
    });

    it('arrives from the configured sender at the target address, with the first line as its subject', async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, '# Nightly **report**\n\nAll 312 tests passed.');
      const [email] = fake.messages;
      expect(email!.envelopeFrom).toBe(SMTP_USERNAME);
      expect(email!.envelopeTo).toEqual(['ops@example.com']);
      expect(email!.headers.from).toBe(`Agent <${SMTP_USERNAME}>`);
      expect(email!.headers.to).toBe('ops@example.com');
      expect(email!.headers.subject).toBe('Nightly report');
      expect(email!.headers['content-type']).toMatch(/^text\/plain; charset=utf-8/);
      expect(email!.text).toBe('# Nightly **report**\n\nAll 312 tests passed.');
      expect(receipt.messageIds).toEqual([email!.headers['message-id']]);
    });

    it('logs in with the configured username and password before sending', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'hello');
      expect(fake.logins).toEqual([{ method: 'PLAIN', username: SMTP_USERNAME, encrypted: false, accepted: true }]);
      expect(fake.messages[0]!.user).toBe(SMTP_USERNAME);
    });

    it('is marked as automatic so that out-of-office replies leave it alone', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'hello');
      expect(fake.messages[0]!.headers['auto-submitted']).toBe('auto-generated');
    });

    it('uses the configured subject when one is set', async () => {
      const { delivery, target } = deliveryOver(fake, { subject: 'Agent: nightly build' });
      await delivery.deliver(target, 'All green.');
      expect(fake.messages[0]!.headers.subject).toBe('Agent: nightly build');
    });

    it('delivers a 100,000-character answer whole, in one message', async () => {
      const text = longAnswer(100_000);
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, text);
      expect(text.length).toBeGreaterThanOrEqual(100_000);
      expect(fake.delivered).toEqual([text]);
      expect(receipt.messageIds).toHaveLength(1);
    });

    it('keeps accents, symbols and emoji intact in the text and the subject', async () => {
      const text = 'Déploiement réussi ✅ — 100 %\n\nNächster Lauf: 03:00 Uhr, 東京';
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, text);
      expect(fake.delivered).toEqual([text]);
      expect(fake.messages[0]!.headers.subject).toBe('Déploiement réussi ✅ — 100 %');
    });

    it('sends a retried message with the same Message-ID, so a mail client can fold a duplicate away', async () => {
      fake.failNext({ failure: 'unavailable' });
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'once only');
      const ids = fake.offered.map((email) => email.headers['message-id']);
      expect(ids).toHaveLength(2);
      expect(ids[1]).toBe(ids[0]);
      expect(receipt.messageIds).toEqual([ids[0]]);
      expect(ids[0]).toMatch(/^<agent\.[\w.-]+@example\.com>$/);
    });
  });

  describe('the subject taken from the text', () => {
    it('skips blank lines and Markdown marks', () => {
      expect(subjectOf('\n\n  ## **Build** failed  \nstack trace')).toBe('Build failed');
    });

    it('is cut to 78 characters', () => {
      const subject = subjectOf(`${'word '.repeat(40)}\nmore`);
      expect(subject.length).toBe(78);
      expect(subject.endsWith('…')).toBe(true);
    });

    it('falls back to a fixed subject when the text has no words', () => {
      expect(subjectOf('***\n\n#')).toBe('Message from agent');
    });
  });

  describe('failures', () => {
    beforeEach(async () => {
      fake = await FakeSmtpServer.start();
    });

    it('names the username and password settings, and never shows the password, when the login is refused', async () => {
      const { delivery, target, timer } = deliveryOver(fake, { password: 'wrong-password-1234' });
      const error = await failureOf(delivery.deliver(target, 'hello'));
      expect(error.message).toContain('email refused the credentials (535 5.7.8 Authentication credentials invalid)');
      expect(error.message).toContain(
        'check platforms.email.username (or EMAIL_USERNAME) and platforms.email.password (or EMAIL_PASSWORD)',
      );
      expect(error.message).not.toContain('wrong-password-1234');
      expect(error.message).not.toContain(SMTP_PASSWORD);
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('retries a server that says "try again later" (451) and reports its words when it keeps saying so', async () => {
      fake.failNext({ failure: 'unavailable', times: Infinity });
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'later'));
      expect(error.message).toBe('email is unavailable (451 4.3.0 Local error in processing, try again later) (gave up after 3 attempts)');
      expect(timer.waits).toEqual([1000, 2000]);
    });

    it('backs off and retries when the server is throttling (421), since SMTP gives no retry hint', async () => {
      fake.failNext({ failure: 'rate_limited' });
      const { delivery, target, timer, log } = deliveryOver(fake);
      await delivery.deliver(target, 'after the throttle');
      expect(fake.delivered).toEqual(['after the throttle']);
      expect(timer.waits).toEqual([1000]);
      expect(log.entries.map((entry) => entry.message)).toEqual([
        expect.stringContaining('email is unavailable (421 4.7.0 Too many messages, slow down)'),
      ]);
    });

    it("fails at once with the server's words when it rejects the message (550)", async () => {
      fake.failNext({ failure: 'refused' });
      const { delivery, target, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'buy now'));
      expect(error.message).toBe('email refused the message (550 5.7.1 Message rejected as spam by content filter)');
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('names the recipient the server has no mailbox for', async () => {
      const { delivery } = deliveryOver(fake);
      const target = { kind: 'platform' as const, platform: 'email', destination: `nobody@${UNKNOWN_DOMAIN}`, threadId: null };
      const error = await failureOf(delivery.deliver(target, 'hello'));
      expect(error.message).toBe(
        `email refused the recipient nobody@${UNKNOWN_DOMAIN} (550 5.1.1 <nobody@${UNKNOWN_DOMAIN}>: Recipient address rejected: User unknown)`,
      );
      expect(fake.attempts).toBe(1);
      expect(fake.offered).toEqual([]);
    });

    it("reports the server's words when it will not send from the configured address", async () => {
      const { delivery, target } = deliveryOver(fake, { from: 'Someone Else <else@example.com>' });
      const error = await failureOf(delivery.deliver(target, 'hello'));
      expect(error.message).toMatch(/^email refused the message \(553 5\.7\.1 <else@example\.com>: Sender address rejected/);
      expect(fake.delivered).toEqual([]);
    });

    it('says where it could not connect, as a failure worth retrying, when nothing listens on the port', async () => {
      const settings = fake.settings;
      await fake.close();
      const error = await failureOf(senderWith(settings).send({ chatId: 'ops@example.com', threadId: null }, 'anyone?', 'k1'));
      expect(error.message).toBe(`could not reach email at 127.0.0.1:${settings.smtp_port} (ECONNREFUSED)`);
      expect((error as PlatformSendError).kind).toBe('unavailable');
      fake = await FakeSmtpServer.start(); // afterEach closes it
    });

    it('refuses an unknown secure mode, naming the setting, without connecting', async () => {
      const { delivery, target } = deliveryOver(fake, { secure: 'ssl' });
      const error = await failureOf(delivery.deliver(target, 'hello'));
      // Refused before anything is sent, as the gateway's start-up check refuses it.
      expect(error.message).toBe(
        'Delivery target "email:ops@example.com" cannot be delivered: platforms.email.secure must be starttls, tls or none (got "ssl"); correct it',
      );
      expect(fake.attempts).toBe(0);
    });
  });

  describe('encryption', () => {
    it('speaks implicit TLS from the first byte with secure: tls', async () => {
      fake = await FakeSmtpServer.start({ implicitTls: true });
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, 'over TLS');
      expect(fake.logins).toEqual([expect.objectContaining({ encrypted: true, accepted: true })]);
      expect(fake.messages[0]!.encrypted).toBe(true);
    });

    it('upgrades with STARTTLS before logging in with secure: starttls', async () => {
      fake = await FakeSmtpServer.start();
      const { delivery, target } = deliveryOver(fake, { secure: 'starttls', tls_reject_unauthorized: 'false' });
      await delivery.deliver(target, 'upgraded');
      expect(fake.logins).toEqual([expect.objectContaining({ encrypted: true, accepted: true })]);
      expect(fake.messages[0]!.encrypted).toBe(true);
    });

    it('requires STARTTLS by default and never falls back to plaintext when the server lacks it', async () => {
      fake = await FakeSmtpServer.start({ startTls: false });
      const { smtp_host, smtp_port, username, password, from } = fake.settings;
      const sender = senderWith({ smtp_host: smtp_host!, smtp_port: smtp_port!, username: username!, password: password!, from: from! });
      const error = await failureOf(sender.send({ chatId: 'ops@example.com', threadId: null }, 'secret plans', 'k1'));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect((error as PlatformSendError).kind).toBe('refused');
      expect(error.message).toMatch(
        /^email server 127\.0\.0\.1:\d+ does not offer STARTTLS \(.*\), which platforms\.email\.secure \(or EMAIL_SECURE\) "starttls" requires/,
      );
      expect(fake.logins).toEqual([]);
      expect(fake.offered).toEqual([]);
    });

    it('does not trust a server certificate it cannot verify unless told to', async () => {
      fake = await FakeSmtpServer.start();
      const { delivery, target } = deliveryOver(fake, { secure: 'starttls' });
      const error = await failureOf(delivery.deliver(target, 'secret plans'));
      expect(error.message).toMatch(/^email server 127\.0\.0\.1:\d+ presented a TLS certificate that is not trusted \([A-Z_]+\)$/);
      expect(fake.logins).toEqual([]);
      expect(fake.attempts).toBe(1);
    });
  });
});
