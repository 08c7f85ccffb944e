import { slackSignature, slackSignatureProblem } from '../../../src/adapters/inbound/slackSignature.js';

/** The worked example of Slack's "Verifying requests from Slack" page: its secret, timestamp, body and signature. */
const SLACK_EXAMPLE = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  body:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar' +
    '&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com' +
    '%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};
const AT_THAT_TIME = 1531420618 * 1000;

describe("Slack's request signature", () => {
  it("matches Slack's own worked example", () => {
    expect(slackSignature(SLACK_EXAMPLE.secret, SLACK_EXAMPLE.timestamp, SLACK_EXAMPLE.body)).toBe(SLACK_EXAMPLE.signature);
    expect(
      slackSignatureProblem(
        SLACK_EXAMPLE.secret,
        SLACK_EXAMPLE.timestamp,
        SLACK_EXAMPLE.signature,
        Buffer.from(SLACK_EXAMPLE.body),
        AT_THAT_TIME,
      ),
    ).toBeNull();
  });

  it('says what is wrong: another secret, a missing header, a timestamp out of the window', () => {
    const body = Buffer.from(SLACK_EXAMPLE.body);
    const { timestamp, signature } = SLACK_EXAMPLE;

    expect(slackSignatureProblem('another-secret', timestamp, signature, body, AT_THAT_TIME)).toBe('wrong');
    expect(slackSignatureProblem(SLACK_EXAMPLE.secret, timestamp, signature.toUpperCase(), body, AT_THAT_TIME)).toBe('wrong');
    expect(slackSignatureProblem(SLACK_EXAMPLE.secret, timestamp, undefined, body, AT_THAT_TIME)).toBe('missing');
    expect(slackSignatureProblem(SLACK_EXAMPLE.secret, 'yesterday', signature, body, AT_THAT_TIME)).toBe('missing');
    expect(slackSignatureProblem(SLACK_EXAMPLE.secret, timestamp, signature, body, AT_THAT_TIME + 300_000)).toBeNull();
    expect(slackSignatureProblem(SLACK_EXAMPLE.secret, timestamp, signature, body, AT_THAT_TIME + 301_000)).toBe('stale');
    expect(slackSignatureProblem(SLACK_EXAMPLE.secret, timestamp, signature, body, AT_THAT_TIME - 301_000)).toBe('stale');
  });
});
