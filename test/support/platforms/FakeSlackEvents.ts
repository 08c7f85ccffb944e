import request from 'supertest';
import type { Clock } from '../../../src/application/ports/Clock.js';
import { slackSignature } from '../../../src/adapters/inbound/slackSignature.js';

/** The signing secret of the test app (Basic Information → App Credentials → Signing Secret). */
export const SLACK_SIGNING_SECRET = '8e3fa1c2b7d94c0e9a15f2d6c4b8a3e1';
/** The bot user FakeSlackServer's `auth.test` names. */
export const SLACK_BOT_USER = 'U0BOT';
export const ALICE = 'U0ALICE001';
export const ALICE_DM = 'D0ALICE001';
export const GENERAL = 'C0HOME0001';

export interface SlackPostOptions {
  /** The X-Slack-Request-Timestamp; default the clock's now. */
  timestamp?: number;
  /** The X-Slack-Signature; default the right one for the secret. */
  signature?: string | null;
  secret?: string;
  headers?: Record<string, string>;
}

/**
 * Slack's side of the Events API (https://api.slack.com/apis/events-api): posts signed event
 * envelopes to a Request URL as Slack does (`Content-Type: application/json`,
 * `X-Slack-Request-Timestamp`, `X-Slack-Signature: v0=…`), with messages shaped like the
 * `message.im` and `app_mention` events Slack sends.
 */
export class FakeSlackEvents {
  private nextEvent = 1;
  private nextTs = 1;

  constructor(
    private readonly baseUrl: string,
    private readonly clock: Clock,
    private readonly path = '/slack/events',
  ) {}

  /** An `event_callback` envelope around `event`, with a new event id unless given one. */
  envelope(event: Record<string, unknown>, fields: Record<string, unknown> = {}): Record<string, unknown> {
    const eventTime = Math.floor(this.clock.now().getTime() / 1000);
    return {
      token: 'legacy-verification-token',
      team_id: 'T0ACME',
      api_app_id: 'A0AGENT',
      event,
      type: 'event_callback',
      event_id: `Ev0${String(this.nextEvent++).padStart(8, '0')}`,
      event_time: eventTime,
      authorizations: [{ enterprise_id: null, team_id: 'T0ACME', user_id: SLACK_BOT_USER, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      ...fields,
    };
  }

  /** A `message` event in Alice's direct-message channel with the bot (`message.im`). */
  directMessage(text: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
    const ts = this.ts();
    return { type: 'message', channel: ALICE_DM, user: ALICE, text, ts, event_ts: ts, channel_type: 'im', ...fields };
  }

  /** An `app_mention` event in #general. */
  mention(text: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
    const ts = this.ts();
    return { type: 'app_mention', channel: GENERAL, user: ALICE, text, ts, event_ts: ts, ...fields };
  }

  /** The same message as a channel `message` event (`message.channels`), which Slack sends beside the `app_mention`. */
  channelMessage(text: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
    const ts = this.ts();
    return { type: 'message', channel: GENERAL, user: ALICE, text, ts, event_ts: ts, channel_type: 'channel', ...fields };
  }

  /** Posts `body` (an object is sent as JSON) to the Request URL, signed unless told otherwise. */
  post(body: Record<string, unknown> | string, options: SlackPostOptions = {}): request.Test {
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    const timestamp = String(options.timestamp ?? Math.floor(this.clock.now().getTime() / 1000));
    const signature =
      options.signature === undefined ? slackSignature(options.secret ?? SLACK_SIGNING_SECRET, timestamp, raw) : options.signature;
    const test = request(this.baseUrl).post(this.path).set('Content-Type', 'application/json').set('X-Slack-Request-Timestamp', timestamp);
    if (signature !== null) test.set('X-Slack-Signature', signature);
    for (const [name, value] of Object.entries(options.headers ?? {})) test.set(name, value);
    return test.send(raw);
  }

  private ts(): string {
    const seconds = Math.floor(this.clock.now().getTime() / 1000);
    return `${seconds}.${String(this.nextTs++).padStart(6, '0')}`;
  }
}
