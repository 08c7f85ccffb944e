import { createSender, MattermostSender } from '../../../src/adapters/delivery/MattermostSender.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';
import { PlatformSendError, type PlatformSender } from '../../../src/application/ports/PlatformSender.js';
import { deliveryOver } from '../../contract/PlatformSender.contract.js';
import {
  FakeMattermostServer,
  MATTERMOST_CHANNELS,
  MATTERMOST_FOREIGN_CHANNEL_ID,
  MATTERMOST_ROOT_POST_ID,
  MATTERMOST_TOKEN,
} from '../../support/platforms/FakeMattermostServer.js';

const RELEASES = MATTERMOST_CHANNELS.releases.id;

describe('MattermostSender', () => {
  let fake: FakeMattermostServer;
  beforeEach(async () => {
    fake = await FakeMattermostServer.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  const senderFor = (extraSettings: Record<string, string> = {}): PlatformSender =>
    createSender(platformSettings('mattermost', { ...fake.settings, ...extraSettings }, {}, {}));
  /** What `promise` was rejected with, checked to be an instance of `type`. */
  const rejectionOf = <T>(promise: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> =>
    promise.then(
      () => {
        throw new Error('expected a failure');
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(type);
        return error as T;
      },
    );
  const failureOf = (promise: Promise<unknown>) => rejectionOf(promise, PlatformSendError);

  it('posts the answer to /api/v4/posts with the token as a bearer and answers with the post id', async () => {
    const { delivery, target } = deliveryOver(fake);
    const receipt = await delivery.deliver(target, 'Nightly build passed.');
    const [request] = fake.sends;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/api/v4/posts');
    expect(request?.headers.authorization).toBe(`Bearer ${MATTERMOST_TOKEN}`);
    expect(request?.body).toMatchObject({ channel_id: RELEASES, message: 'Nightly build passed.' });
    expect(request?.body).not.toHaveProperty('root_id');
    expect(receipt.messageIds).toEqual([fake.posts.at(-1)!.id]);
  });

  it('replies under the root post when the delivery names a thread', async () => {
    const { delivery } = deliveryOver(fake);
    await delivery.deliver(
      { kind: 'platform', platform: 'mattermost', destination: RELEASES, threadId: MATTERMOST_ROOT_POST_ID },
      'Release notes attached.',
    );
    expect(fake.sends[0]?.body).toMatchObject({ channel_id: RELEASES, root_id: MATTERMOST_ROOT_POST_ID });
    expect(fake.posts.at(-1)).toMatchObject({ root_id: MATTERMOST_ROOT_POST_ID, message: 'Release notes attached.' });
  });

  it('works with a server address configured with a trailing slash', async () => {
    const { delivery, target } = deliveryOver(fake, { url: `${fake.url}/` });
    await delivery.deliver(target, 'slash');
    expect(fake.sends.map((request) => request.path)).toEqual(['/api/v4/posts']);
  });

  it('works with a server address pasted with its /api/v4 suffix', async () => {
    const { delivery, target } = deliveryOver(fake, { url: `${fake.url}/api/v4/` });
    await delivery.deliver(target, 'suffix');
    expect(fake.delivered).toEqual(['suffix']);
  });

  it('does not post twice when a retry follows an answer lost after the post was made', async () => {
    fake.loseNextAnswer();
    const { delivery, target, timer } = deliveryOver(fake);
    const receipt = await delivery.deliver(target, 'exactly once');
    expect(fake.attempts).toBe(2);
    expect(timer.waits).toEqual([1000]);
    expect(fake.posts.filter((post) => post.message === 'exactly once')).toHaveLength(1);
    expect(receipt.messageIds).toEqual([fake.posts.at(-1)!.id]);
    const [first, retry] = fake.requests.map((request) => request.body?.pending_post_id);
    expect(first).toEqual(expect.any(String));
    expect(retry).toBe(first);
  });

  it('waits the Retry-After Mattermost sends with a 429', async () => {
    fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 4 });
    const { delivery, target, timer } = deliveryOver(fake);
    await delivery.deliver(target, 'after a pause');
    expect(timer.waits).toEqual([4000]);
    expect(fake.delivered).toEqual(['after a pause']);
  });

  it('waits until X-Ratelimit-Reset when a 429 has no Retry-After, as seconds to go or as a Unix time', async () => {
    const now = Date.UTC(2026, 0, 1, 9, 0, 0);
    const sender = new MattermostSender(platformSettings('mattermost', fake.settings, {}, {}), () => now);
    const to = { chatId: RELEASES, threadId: null };

    fake.rateLimitHeaders = { 'X-Ratelimit-Reset': '3' };
    fake.failNext({ failure: 'rate_limited' });
    const inSeconds = await failureOf(sender.send(to, 'a', 'k1'));
    expect(inSeconds.kind).toBe('rate_limited');
    expect(inSeconds.retryAfterMs).toBe(3000);
    expect(inSeconds.message).toBe('mattermost is rate-limiting (HTTP 429: limit exceeded)');

    fake.rateLimitHeaders = { 'X-Ratelimit-Reset': String(now / 1000 + 12) };
    fake.failNext({ failure: 'rate_limited' });
    expect((await failureOf(sender.send(to, 'b', 'k2'))).retryAfterMs).toBe(12_000);
  });

  it('names the token setting and its variable when Mattermost refuses the token, and never shows the token', async () => {
    const wrongToken = 'zz8wrongtoken0000000000000';
    const { delivery, target } = deliveryOver(fake, { token: wrongToken });
    const error = await rejectionOf(delivery.deliver(target, 'hello'), DeliveryError);
    expect(error.message).toBe(
      'mattermost refused the credentials (HTTP 401: Invalid or expired session, please login again. [api.context.session_expired.app_error]); check platforms.mattermost.token (or MATTERMOST_TOKEN)',
    );
    expect(error.message).not.toContain(wrongToken);
    expect(fake.attempts).toBe(1);
    expect(fake.posts).toHaveLength(1);
  });

  it('fails at once for a channel the bot account is not in, saying to add it or check the id', async () => {
    const { delivery, timer } = deliveryOver(fake);
    const target = { kind: 'platform' as const, platform: 'mattermost', destination: MATTERMOST_FOREIGN_CHANNEL_ID, threadId: null };
    const error = await rejectionOf(delivery.deliver(target, 'hello'), DeliveryError);
    expect(error.message).toMatch(
      /^mattermost refused the credentials \(HTTP 403: You do not have the appropriate permissions\. \[api\.context\.permissions\.app_error\]/,
    );
    expect(error.message).toContain(
      `cannot post in channel ${MATTERMOST_FOREIGN_CHANNEL_ID}: add it to the channel, or check the channel id`,
    );
    expect(error.message).toContain('check platforms.mattermost.token (or MATTERMOST_TOKEN)');
    expect(fake.attempts).toBe(1);
    expect(timer.waits).toEqual([]);
  });

  it("fails at once with Mattermost's reason when the thread's root post does not exist", async () => {
    const { delivery } = deliveryOver(fake);
    const target = { kind: 'platform' as const, platform: 'mattermost', destination: RELEASES, threadId: 'r9gone00000000000000000000' };
    const error = await rejectionOf(delivery.deliver(target, 'hello'), DeliveryError);
    expect(error.message).toBe(
      'mattermost refused the message (HTTP 400: Invalid RootId parameter. [api.post.create_post.root_id.app_error])',
    );
    expect(fake.attempts).toBe(1);
  });

  it('does not count a web page answered with 200 as delivered (an address that is not the API root)', async () => {
    const error = await failureOf(senderFor({ url: `${fake.url}/chat` }).send({ chatId: RELEASES, threadId: null }, 'lost?', 'k1'));
    expect(error.kind).toBe('refused');
    expect(error.message).toMatch(/^mattermost answered HTTP 200 without confirming the message \(<!doctype html>/);
    expect(fake.posts).toHaveLength(1);
  });

  it('lists the public and private channels by the name people type after #, leaving out direct and group messages', async () => {
    const channels = await senderFor().listChannels!();
    expect(channels).toEqual([
      { id: MATTERMOST_CHANNELS.townSquare.id, name: 'town-square' },
      { id: MATTERMOST_CHANNELS.releases.id, name: 'releases' },
      { id: MATTERMOST_CHANNELS.oncall.id, name: 'on-call' },
    ]);
    const [request] = fake.requests;
    expect(request?.method).toBe('GET');
    expect(request?.path).toBe('/api/v4/users/me/channels');
    expect(request?.headers.authorization).toBe(`Bearer ${MATTERMOST_TOKEN}`);
  });

  it('names the token setting when listing channels with a refused token', async () => {
    const error = await failureOf(senderFor({ token: 'zz8wrongtoken0000000000000' }).listChannels!());
    expect(error.kind).toBe('refused');
    expect(error.message).toMatch(
      /^mattermost refused the credentials \(HTTP 401: Invalid or expired session.*check platforms\.mattermost\.token \(or MATTERMOST_TOKEN\)$/,
    );
  });

  it('speaks of the credentials check, not of posting anywhere, when users/me answers 403', async () => {
    fake.answerNextRequest((request) => request.path === '/api/v4/users/me', {
      status: 403,
      json: { id: 'api.context.permissions.app_error', message: 'You do not have the appropriate permissions.', status_code: 403 },
    });
    const error = await failureOf(senderFor().whoAmI!());
    expect(error.kind).toBe('refused');
    expect(error.message).toBe(
      'mattermost refused the credentials check (HTTP 403: You do not have the appropriate permissions. [api.context.permissions.app_error]); check platforms.mattermost.token (or MATTERMOST_TOKEN) and what its account may read',
    );
  });
});
