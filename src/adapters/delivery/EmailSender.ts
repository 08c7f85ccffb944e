import nodemailer, { type NodemailerError, type SMTPTransportOptions, type Transporter } from 'nodemailer';
import { PlatformSendError, type ChatAddress, type PlatformSender, type SentPart } from '../../application/ports/PlatformSender.js';
import { CREDENTIALS_CHECK, PlatformHttp } from './platformHttp.js';
import type { PlatformSettings } from './PlatformSettings.js';

/** nodemailer's TLS switches for each value of `secure`. */
const TLS_MODES: Readonly<Record<string, Pick<SMTPTransportOptions, 'secure' | 'requireTLS' | 'ignoreTLS'>>> = {
  starttls: { secure: false, requireTLS: true },
  tls: { secure: true },
  none: { secure: false, ignoreTLS: true },
};
const SUBJECT_LIMIT = 78;
const FALLBACK_SUBJECT = 'Message from agent';
const UNTRUSTED_CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/;

/**
 * SMTP submission (RFC 6409, https://www.rfc-editor.org/rfc/rfc6409) through nodemailer's SMTP
 * transport (https://nodemailer.com/smtp/). One plain-text message per answer, never split. The
 * message is confirmed by the server's 250 to DATA with the recipient among those it accepted.
 */
export class EmailSender implements PlatformSender {
  readonly platform = 'email';
  readonly partLimit = null;
  private readonly http: PlatformHttp;
  private transporter: Transporter | null = null;

  constructor(private readonly settings: PlatformSettings) {
    // No HTTP here: PlatformHttp is the shared way to word refused credentials and scrub secrets.
    this.http = new PlatformHttp(settings, ['username', 'password']);
  }

  async send(to: ChatAddress, text: string, idempotencyKey: string): Promise<SentPart> {
    const from = this.settings.require('from');
    const transport = this.transport();
    let info: { messageId?: string; accepted?: unknown[]; rejected?: unknown[] };
    try {
      info = await transport.sendMail({
        from,
        to: to.chatId,
        subject: this.settings.get('subject') ?? subjectOf(text),
        text,
        // The same Message-ID on every attempt lets mail clients fold a retried duplicate away.
        messageId: messageIdFor(idempotencyKey, from),
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
    } catch (error) {
      throw this.failure(error as NodemailerError, to.chatId);
    }
    const recipient = to.chatId.toLowerCase();
    const listed = (addresses: unknown[] | undefined) => (addresses ?? []).some((address) => String(address).toLowerCase() === recipient);
    if (listed(info.rejected)) throw new PlatformSendError('refused', `email refused the recipient ${to.chatId}`);
    if (!info.messageId || !listed(info.accepted)) {
      throw new PlatformSendError(
        'refused',
        `email did not confirm the message to ${to.chatId} (accepted: ${(info.accepted ?? []).join(', ') || 'none'})`,
      );
    }
    return { messageId: info.messageId };
  }

  /** Connects and signs in (SMTP AUTH) without sending anything. */
  async whoAmI(): Promise<string> {
    try {
      await this.transport().verify();
    } catch (error) {
      throw this.failure(error as NodemailerError, null);
    }
    return `${this.settings.require('username')} at ${this.settings.require('smtp_host')}:${this.settings.require('smtp_port')}`;
  }

  private transport(): Transporter {
    if (this.transporter) return this.transporter;
    const mode = TLS_MODES[this.settings.require('secure').toLowerCase()];
    if (mode === undefined) throw this.badSetting('secure', 'starttls, tls or none');
    const port = Number(this.settings.require('smtp_port'));
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw this.badSetting('smtp_port', 'a port number');
    const verify = this.settings.get('tls_reject_unauthorized') ?? 'true';
    if (verify !== 'true' && verify !== 'false') throw this.badSetting('tls_reject_unauthorized', 'true or false');
    const timeout = this.settings.timeoutMs;
    this.transporter = nodemailer.createTransport({
      host: this.settings.require('smtp_host'),
      port,
      ...mode,
      tls: { rejectUnauthorized: verify === 'true' },
      auth: { user: this.settings.require('username'), pass: this.settings.require('password') },
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      dnsTimeout: timeout,
    });
    return this.transporter;
  }

  private badSetting(key: string, expected: string): PlatformSendError {
    return new PlatformSendError('refused', `${this.settings.where(key)} is "${this.settings.get(key)}"; it must be ${expected}`);
  }

  /** `recipient` is the one a send was for; null for the credentials check, which sends nothing. */
  private failure(error: NodemailerError, recipient: string | null): PlatformSendError {
    const server = `${this.settings.get('smtp_host')}:${this.settings.get('smtp_port')}`;
    const said = this.http.clean(error.response ?? error.message ?? String(error));
    const code = error.responseCode;
    if (error.code === 'ETIMEDOUT')
      return new PlatformSendError('unavailable', `email did not answer within ${this.settings.timeoutMs / 1000} s`, null, {
        cause: error,
      });
    if (error.code === 'EAUTH' || code === 535) return this.http.refusedCredentials(said);
    if (error.code === 'ETLS') {
      return new PlatformSendError(
        'refused',
        `email server ${server} does not offer STARTTLS (${said}), which ${this.settings.where('secure')} "starttls" requires; use "tls" for port 465, or "none" only for a local relay`,
      );
    }
    if (UNTRUSTED_CERTIFICATE.test(error.originalCode ?? '')) {
      return new PlatformSendError(
        'refused',
        `email server ${server} presented a TLS certificate that is not trusted (${error.originalCode})`,
      );
    }
    if (code !== undefined && code >= 400 && code < 500) return new PlatformSendError('unavailable', `email is unavailable (${said})`);
    if (code !== undefined && code >= 500) {
      const what = recipient === null ? CREDENTIALS_CHECK : error.command === 'RCPT TO' ? `the recipient ${recipient}` : 'the message';
      return new PlatformSendError('refused', `email refused ${what} (${said})`);
    }
    if (error.code === 'ESOCKET' || error.code === 'EDNS' || error.code === 'ECONNECTION') {
      return new PlatformSendError('unavailable', `could not reach email at ${server} (${error.originalCode ?? error.code})`, null, {
        cause: error,
      });
    }
    const attempt = recipient === null ? `complete ${CREDENTIALS_CHECK}` : 'send the message';
    return new PlatformSendError('refused', `email could not ${attempt} (${said})`, null, { cause: error });
  }
}

/** The first line that has words once Markdown heading and emphasis marks are gone, cut to fit a header line. */
export function subjectOf(text: string): string {
  for (const line of text.split('\n')) {
    const words = line.replace(/[#*]/g, '').replace(/\s+/g, ' ').trim();
    if (words !== '') return words.length > SUBJECT_LIMIT ? `${words.slice(0, SUBJECT_LIMIT - 1).trimEnd()}…` : words;
  }
  return FALLBACK_SUBJECT;
}

function messageIdFor(idempotencyKey: string, from: string): string {
  const domain = /@([^\s<>@]+)>?\s*$/.exec(from)?.[1] ?? 'localhost';
  return `<agent.${idempotencyKey.replace(/[^\w.-]/g, '-')}@${domain}>`;
}

export function createSender(settings: PlatformSettings): PlatformSender {
  return new EmailSender(settings);
}
