import type { PlatformSender } from '../../../src/application/ports/PlatformSender.js';
import { PlatformSendError } from '../../../src/application/ports/PlatformSender.js';
import { createSender } from '../../../src/adapters/delivery/DiscordSender.js';
import { platformSettings } from '../../../src/adapters/delivery/PlatformSettings.js';
import { parseDeliveryTargets, type PlatformTarget } from '../../../src/domain/DeliveryTarget.js';
import { deliveryOver, longAnswer } from '../../contract/PlatformSender.contract.js';
import {
  BUILDS,
  DISCORD_TOKEN,
  FakeDiscordServer,
  FOREIGN_CHANNEL,
  OPS,
  TWO_GUILDS,
  type FakeDiscordGuild,
} from '../../support/platforms/FakeDiscordServer.js';

const targetOf = (text: string) => parseDeliveryTargets(text)[0] as PlatformTarget;
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as Error,
  );

describe('DiscordSender', () => {
  let fake: FakeDiscordServer;
  afterEach(async () => {
    await fake.close();
  });

  const senderFor = (extra: Record<string, string> = {}): PlatformSender =>
    createSender(platformSettings('discord', { ...fake.settings, ...extra }, {}, {}));

  describe('sending', () => {
    beforeEach(async () => {
      fake = await FakeDiscordServer.start();
    });

    it("posts the answer as JSON content to the channel's messages endpoint as the bot", async () => {
      const { delivery } = deliveryOver(fake);
      await delivery.deliver(targetOf(`discord:${BUILDS.deploys}`), 'Deploy finished.');
      const [request] = fake.sends;
      expect(request!.method).toBe('POST');
      expect(request!.path).toBe(`/api/v10/channels/${BUILDS.deploys}/messages`);
      expect(request!.headers.authorization).toBe(`Bot ${DISCORD_TOKEN}`);
      expect(request!.headers['content-type']).toMatch(/^application\/json/);
      expect(request!.headers['user-agent']).toMatch(/^DiscordBot \(/);
      expect(request!.body.content).toBe('Deploy finished.');
    });

    it('never lets an answer ping @everyone, @here, a role or a user', async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, '@everyone @here <@&123456789012345678> <@123456789012345678> the build broke');
      expect(fake.sends[0]!.body.allowed_mentions).toEqual({ parse: [] });
    });

    it('gives the id Discord gave the message as the confirmation', async () => {
      const { delivery, target } = deliveryOver(fake);
      const receipt = await delivery.deliver(target, 'done');
      expect(receipt.messageIds).toEqual(['1300000000000000001']);
    });

    it("posts into a thread by the thread's own id when the target names one", async () => {
      const { delivery } = deliveryOver(fake);
      const receipt = await delivery.deliver(targetOf(`discord:${OPS.general}:${OPS.generalThread}`), 'nightly results');
      expect(fake.sends[0]!.path).toBe(`/api/v10/channels/${OPS.generalThread}/messages`);
      expect(receipt).toMatchObject({ chatId: OPS.general, threadId: OPS.generalThread });
    });

    it('posts into the thread a home channel names', async () => {
      const { delivery } = deliveryOver(fake, { home_channel: `${OPS.general}:${OPS.generalThread}` });
      await delivery.deliver(targetOf('discord'), 'to the home thread');
      expect(fake.sends[0]!.path).toBe(`/api/v10/channels/${OPS.generalThread}/messages`);
    });

    it("keeps every part of a long answer within Discord's 2000 characters", async () => {
      const { delivery, target } = deliveryOver(fake);
      await delivery.deliver(target, longAnswer(4500));
      expect(fake.delivered.length).toBe(3);
      for (const part of fake.delivered) expect(part.length).toBeLessThanOrEqual(2000);
    });

    it('does not count an answer without a message id as delivered', async () => {
      fake.answerNextSendWith({ status: 200, json: {} });
      const error = await failureOf(senderFor().send({ chatId: BUILDS.deploys, threadId: null }, 'lost?', 'k'));
      expect(error).toBeInstanceOf(PlatformSendError);
      expect((error as PlatformSendError).kind).toBe('refused');
      expect(error!.message).toMatch(/discord answered HTTP 200 without confirming the message/);
    });
  });

  describe('refusals', () => {
    beforeEach(async () => {
      fake = await FakeDiscordServer.start();
    });

    it("fails at once with Discord's words and code for an unknown channel", async () => {
      const { delivery, timer } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf('discord:123456789012345678'), 'hello'));
      expect(error!.message).toBe('discord refused the message (HTTP 404: Unknown Channel (code 10003))');
      expect(fake.attempts).toBe(1);
      expect(timer.waits).toEqual([]);
    });

    it('says which permissions to grant, not which token to check, when the bot may not post in a channel', async () => {
      const { delivery } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf(`discord:${FOREIGN_CHANNEL}`), 'hello'));
      expect(error!.message).toContain('discord refused the message (HTTP 403: Missing Access (code 50001))');
      expect(error!.message).toContain(`View Channel and Send Messages in channel ${FOREIGN_CHANNEL}`);
      expect(error!.message).not.toContain('credentials');
      expect(fake.attempts).toBe(1);
    });

    it('explains which field Discord found invalid, e.g. a channel name the directory does not know', async () => {
      const { delivery } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(targetOf('discord:standup'), 'hello'));
      expect(error!.message).toBe(
        'discord refused the message (HTTP 400: Invalid Form Body (code 50035): channel_id: Value "standup" is not snowflake.)',
      );
    });

    it('names the bot token setting and its variable when Discord refuses the token, without printing it', async () => {
      const wrongToken = 'MTAwMDAwMDAwMDAwMDAwMDAw.wrong.not-the-bot-token';
      const { delivery, target } = deliveryOver(fake, { bot_token: wrongToken });
      const error = await failureOf(delivery.deliver(target, 'hello'));
      expect(error!.message).toBe(
        'discord refused the credentials (401: Unauthorized); check platforms.discord.bot_token (or DISCORD_BOT_TOKEN)',
      );
      expect(error!.message).not.toContain(wrongToken);
      expect(fake.delivered).toEqual([]);
    });

    it('cuts the bot token out of an error text that echoes it', async () => {
      fake.answerNextSendWith({ status: 400, json: { message: `Bad header "Authorization: Bot ${DISCORD_TOKEN}"`, code: 0 } });
      const { delivery, target } = deliveryOver(fake);
      const error = await failureOf(delivery.deliver(target, 'hello'));
      expect(error!.message).toContain('Authorization: Bot ***');
      expect(error!.message).not.toContain(DISCORD_TOKEN);
    });

    it("waits Discord's Retry-After after a 429, then delivers once", async () => {
      fake.failNext({ failure: 'rate_limited', retryAfterSeconds: 2.5 });
      const { delivery, target, timer, log } = deliveryOver(fake);
      await delivery.deliver(target, 'after the storm');
      expect(timer.waits).toEqual([3000]);
      expect(fake.delivered).toEqual(['after the storm']);
      expect(log.entries.map((entry) => entry.message)).toEqual([
        expect.stringContaining('discord is rate-limiting (HTTP 429: You are being rate limited.)'),
      ]);
    });

    it("waits the body's retry_after when a 429 comes without a Retry-After header", async () => {
      fake.answerNextSendWith({ status: 429, json: { message: 'You are being rate limited.', retry_after: 1.5, global: true } });
      const { delivery, target, timer } = deliveryOver(fake);
      await delivery.deliver(target, 'eventually');
      expect(timer.waits).toEqual([1500]);
      expect(fake.delivered).toEqual(['eventually']);
    });
  });

  describe('listing channels', () => {
    it('lists the text and announcement channels of every server the bot is in', async () => {
      fake = await FakeDiscordServer.start();
      const channels = await senderFor().listChannels!();
      expect(channels).toEqual([
        { id: OPS.general, name: 'general' },
        { id: OPS.releases, name: 'releases' },
        { id: BUILDS.general, name: 'general' },
        { id: BUILDS.deploys, name: 'deploys' },
      ]);
      expect(fake.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
        'GET /api/v10/users/@me/guilds',
        `GET /api/v10/guilds/${OPS.guild}/channels`,
        `GET /api/v10/guilds/${BUILDS.guild}/channels`,
      ]);
      for (const request of fake.requests) expect(request.headers.authorization).toBe(`Bot ${DISCORD_TOKEN}`);
    });

    it('lists the channels of every server when the bot is in more than 200', async () => {
      const guilds: FakeDiscordGuild[] = Array.from({ length: 201 }, (_, index) => {
        const id = String(800000000000000000n + BigInt(index + 1));
        return { id, name: `server ${index + 1}`, channels: [{ id: String(BigInt(id) + 50000n), name: `room-${index + 1}`, type: 0 }] };
      });
      fake = await FakeDiscordServer.start(guilds);
      const channels = await senderFor().listChannels!();
      expect(channels).toHaveLength(201);
      expect(channels.at(-1)!.name).toBe('room-201');
      const guildPages = fake.requests.filter((request) => request.path.endsWith('/users/@me/guilds'));
      expect(guildPages.map((request) => request.query.get('after'))).toEqual(['0', guilds[199]!.id]);
    });

    it('names the bot token setting when Discord refuses the token while listing', async () => {
      fake = await FakeDiscordServer.start(TWO_GUILDS);
      const error = await failureOf(senderFor({ bot_token: 'MTAwMDAwMDAwMDAw.expired.token' }).listChannels!());
      expect(error).toBeInstanceOf(PlatformSendError);
      expect(error!.message).toBe(
        'discord refused the credentials (401: Unauthorized); check platforms.discord.bot_token (or DISCORD_BOT_TOKEN)',
      );
    });
  });
});
