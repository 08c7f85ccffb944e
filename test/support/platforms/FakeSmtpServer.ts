import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { FailurePlan, FakeFailure, FakePlatformServer, WhoAmIOddity } from './FakePlatformServer.js';

export const SMTP_USERNAME = 'agent@example.com';
export const SMTP_PASSWORD = 'TEST-smtp-password';
/** Mail to this domain has no mailbox: refused at RCPT as a real server does. */
export const UNKNOWN_DOMAIN = 'unknown.example';

export interface FakeSmtpOptions {
  /** TLS from the first byte, as on port 465; the settings then say `secure: tls`. Default false. */
  implicitTls?: boolean;
  /** Whether a plain connection is offered STARTTLS, as a submission server does. Default true. */
  startTls?: boolean;
}

/** One message as the server took it in: envelope, decoded headers and plain-text body. */
export interface ReceivedEmail {
  envelopeFrom: string;
  envelopeTo: string[];
  /** Header names lower-cased, values unfolded and with encoded words decoded. */
  headers: Record<string, string>;
  text: string;
  /** The login the session authenticated as, and how. */
  user: string;
  authMethod: string;
  /** Whether the session was encrypted, by implicit TLS or by STARTTLS, when the message came. */
  encrypted: boolean;
}

export interface Login {
  method: string;
  username: string;
  encrypted: boolean;
  accepted: boolean;
}

interface SessionUser {
  username: string;
  method: string;
}

type Plan = FailurePlan & { times: number };

/**
 * An SMTP submission server (`smtp-server`, the project behind nodemailer) on 127.0.0.1: AUTH
 * PLAIN/LOGIN with one fixed login, the sender must be the login's own address, and mail to
 * `@unknown.example` has no mailbox. Failures are SMTP replies: `rate_limited` 421 and
 * `unavailable` 451 at the end of DATA, `refused` 550 at the end of DATA, `unauthorized` 535 to
 * the next AUTH (whatever `when` says: the text is not known yet), `silent` never answers DATA.
 * Every connection is one send attempt, as nodemailer opens one per message.
 */
export class FakeSmtpServer implements FakePlatformServer {
  readonly platform = 'email';
  readonly target = 'email:ops@example.com';
  readonly rateLimitHint = false;
  readonly delivered: string[] = [];
  /** The messages the server confirmed, in order. */
  readonly messages: ReceivedEmail[] = [];
  /** Every message whose DATA arrived, confirmed or not, in order. */
  readonly offered: ReceivedEmail[] = [];
  readonly logins: Login[] = [];
  attempts = 0;
  private readonly plans: Plan[] = [];
  /** Connections still to be turned away with 554 at the greeting. */
  private connectionsToRefuse = 0;
  private readonly server: SMTPServer;

  private constructor(private readonly options: FakeSmtpOptions) {
    this.server = new SMTPServer({
      secure: options.implicitTls === true,
      disabledCommands: options.startTls === false ? ['STARTTLS'] : [],
      authMethods: ['PLAIN', 'LOGIN'],
      allowInsecureAuth: true,
      disableReverseLookup: true,
      logger: false,
      closeTimeout: 50,
      onConnect: (_session, callback) => {
        this.attempts += 1;
        if (this.connectionsToRefuse > 0) {
          this.connectionsToRefuse -= 1;
          return callback(smtpError(554, '5.7.1 Client host rejected: Access denied'));
        }
        callback();
      },
      onAuth: (auth, session, callback) => {
        const username = auth.username ?? '';
        const refusedByPlan = this.takePlan((plan) => plan.failure === 'unauthorized') !== undefined;
        const accepted = !refusedByPlan && username === SMTP_USERNAME && auth.password === SMTP_PASSWORD;
        this.logins.push({ method: auth.method, username, encrypted: session.secure, accepted });
        if (!accepted) return callback(null, { message: '5.7.8 Authentication credentials invalid', responseCode: 535 });
        callback(null, { user: { username, method: auth.method } satisfies SessionUser });
      },
      onMailFrom: (address, _session, callback) => {
        if (address.address.toLowerCase() !== SMTP_USERNAME)
          return callback(smtpError(553, `5.7.1 <${address.address}>: Sender address rejected: not owned by user ${SMTP_USERNAME}`));
        callback();
      },
      onRcptTo: (address, _session, callback) => {
        if (address.address.toLowerCase().endsWith(`@${UNKNOWN_DOMAIN}`))
          return callback(smtpError(550, `5.1.1 <${address.address}>: Recipient address rejected: User unknown`));
        callback();
      },
      onData: (stream, session, callback) => void this.receive(stream, session, callback),
    });
  }

  static async start(options: FakeSmtpOptions = {}): Promise<FakeSmtpServer> {
    const fake = new FakeSmtpServer(options);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.server.address() as AddressInfo).port;
  }

  get settings(): Record<string, string> {
    const tls: Record<string, string> =
      this.options.implicitTls === true ? { secure: 'tls', tls_reject_unauthorized: 'false' } : { secure: 'none' };
    return {
      smtp_host: '127.0.0.1',
      smtp_port: String(this.port),
      ...tls,
      username: SMTP_USERNAME,
      password: SMTP_PASSWORD,
      from: `Agent <${SMTP_USERNAME}>`,
      home_channel: 'oncall@example.com',
    };
  }

  failNext(plan: FailurePlan): void {
    this.plans.push({ ...plan, times: plan.times ?? 1 });
  }

  /** `refused`: the next connection is turned away with 554 at the greeting. SMTP has no answer without the account. */
  answerNextWhoAmI(oddity: WhoAmIOddity): boolean {
    if (oddity === 'anonymous') return false;
    this.connectionsToRefuse += 1;
    return true;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async receive(
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    callback: (error?: Error | null, message?: string) => void,
  ): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const user = session.user as SessionUser;
    const email: ReceivedEmail = {
      envelopeFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
      envelopeTo: session.envelope.rcptTo.map((recipient) => recipient.address),
      ...parseMessage(Buffer.concat(chunks).toString('latin1')),
      user: user.username,
      authMethod: user.method,
      encrypted: session.secure,
    };
    this.offered.push(email);
    const plan = this.takePlan((candidate) => candidate.failure !== 'unauthorized' && (candidate.when?.(email.text) ?? true));
    if (plan?.failure === 'silent') return; // the client gives up; close() ends the connection
    if (plan) return callback(failureReply(plan.failure));
    this.messages.push(email);
    this.delivered.push(email.text);
    callback(null, `2.0.0 Ok: queued as Q${this.messages.length}`);
  }

  private takePlan(matches: (plan: Plan) => boolean): Plan | undefined {
    const plan = this.plans.find((candidate) => candidate.times > 0 && matches(candidate));
    if (plan) plan.times -= 1;
    return plan;
  }
}

function failureReply(failure: Exclude<FakeFailure, 'silent'>): Error {
  switch (failure) {
    case 'rate_limited':
      return smtpError(421, '4.7.0 Too many messages, slow down');
    case 'unavailable':
      return smtpError(451, '4.3.0 Local error in processing, try again later');
    case 'refused':
      return smtpError(550, '5.7.1 Message rejected as spam by content filter');
    case 'unauthorized':
      return smtpError(535, '5.7.8 Authentication credentials invalid');
  }
}

function smtpError(responseCode: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode });
}

/** Headers and the plain-text body of a message as it came over DATA (bytes as latin1). */
function parseMessage(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  // SMTP ends the data on a line break that is not part of the text.
  const body = split === -1 ? '' : raw.slice(split + 4).replace(/\r\n$/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = decodeWords(line.slice(colon + 1).trim());
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const bytes =
    encoding === 'quoted-printable'
      ? quotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64')
        : Buffer.from(body, 'latin1');
  return { headers, text: bytes.toString('utf8').replace(/\r\n/g, '\n') };
}

function quotedPrintable(text: string): Buffer {
  const joined = text.replace(/=\r\n/g, '');
  const bytes: number[] = [];
  for (let index = 0; index < joined.length; index += 1) {
    const hex = joined.slice(index + 1, index + 3);
    if (joined[index] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      index += 2;
    } else {
      bytes.push(joined.charCodeAt(index));
    }
  }
  return Buffer.from(bytes);
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`); adjacent ones join without the space between them. */
function decodeWords(value: string): string {
  const word = /=\?[^?]+\?([BbQq])\?([^?]*)\?=/g;
  return value.replace(/=\?[^?]+\?[BbQq]\?[^?]*\?=(?:\s+=\?[^?]+\?[BbQq]\?[^?]*\?=)*/g, (run) =>
    Buffer.concat(
      [...run.matchAll(word)].map(([, kind, data = '']) =>
        kind!.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : quotedPrintable(data.replace(/_/g, ' ')),
      ),
    ).toString('utf8'),
  );
}
