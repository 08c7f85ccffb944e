import { ConfiguredPlatforms } from '../../../src/adapters/delivery/ConfiguredPlatforms.js';
import type { PlatformSpec } from '../../../src/adapters/delivery/platformCatalog.js';
import { PlatformDelivery } from '../../../src/application/delivery/PlatformDelivery.js';
import { InMemoryChannelDirectory } from '../../support/fakes/InMemoryChannelDirectory.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { RecordingTimer } from '../../support/fakes/RecordingTimer.js';
import { SequentialIds } from '../../support/fakes/SequentialIds.js';

const missingOf = (platforms: ConfiguredPlatforms, platform: string) => platforms.status(platform)!.missing.map((setting) => setting.key);

describe('ConfiguredPlatforms with alternative credentials', () => {
  describe("dingtalk: an app's client id and secret, or a robot webhook alone", () => {
    it('is not configured with neither, and names the app credentials with their variables', () => {
      const status = new ConfiguredPlatforms({}, {}).status('dingtalk')!;
      expect(status.configured).toBe(false);
      expect(status.missing).toEqual([
        { key: 'client_id', variable: 'DINGTALK_CLIENT_ID' },
        { key: 'client_secret', variable: 'DINGTALK_CLIENT_SECRET' },
      ]);
      expect(status.homeChannel).toBeNull();
    });

    it('names what the half-set credentials still lack', () => {
      expect(missingOf(new ConfiguredPlatforms({}, { DINGTALK_CLIENT_SECRET: 'secret-value' }), 'dingtalk')).toEqual(['client_id']);
      expect(missingOf(new ConfiguredPlatforms({ dingtalk: { client_id: 'dingabc' } }, {}), 'dingtalk')).toEqual(['client_secret']);
    });

    it('is configured by the client id and secret, with no home channel of its own', () => {
      const status = new ConfiguredPlatforms({ dingtalk: { client_id: 'dingabc', client_secret: 'secret-value' } }, {}).status('dingtalk')!;
      expect(status).toMatchObject({ configured: true, missing: [], homeChannel: null });
    });

    it('is configured by a robot webhook alone, whose group is the home channel', () => {
      const platforms = new ConfiguredPlatforms({}, { DINGTALK_WEBHOOK_URL: 'https://oapi.dingtalk.com/robot/send?access_token=abc123' });
      expect(platforms.status('dingtalk')).toMatchObject({ configured: true, missing: [], homeChannel: 'webhook' });
    });

    it("keeps a home_channel that is set over the webhook's group", () => {
      const platforms = new ConfiguredPlatforms(
        { dingtalk: { webhook_url: 'https://oapi.dingtalk.com/robot/send?access_token=abc123', home_channel: 'ops' } },
        {},
      );
      expect(platforms.status('dingtalk')!.homeChannel).toBe('ops');
    });

    it('names the missing app credentials in the preflight sentence', () => {
      const platforms = new ConfiguredPlatforms({}, {});
      const delivery = new PlatformDelivery(
        platforms,
        new InMemoryChannelDirectory(),
        new RecordingTimer(),
        new SequentialIds(),
        new RecordingLogger(),
      );
      expect(delivery.problemWith({ kind: 'platform', platform: 'dingtalk', destination: 'cid123==', threadId: null })).toBe(
        'Delivery platform "dingtalk" is not configured: set platforms.dingtalk.client_id (or DINGTALK_CLIENT_ID), platforms.dingtalk.client_secret (or DINGTALK_CLIENT_SECRET) in config.yaml or the environment.',
      );
    });
  });

  describe('the rule for any platform', () => {
    const load = (): never => {
      throw new Error('not loaded in these tests');
    };
    const specs: Record<string, PlatformSpec> = {
      plain: { required: ['token'], defaults: {}, listsChannels: false, load },
      both: { required: ['url'], alternatives: [['user', 'password'], ['api_key']], defaults: {}, listsChannels: false, load },
    };

    it('leaves a platform without alternatives to its required keys, as before', () => {
      expect(new ConfiguredPlatforms({}, {}, specs).status('plain')).toMatchObject({
        configured: false,
        missing: [{ key: 'token', variable: 'PLAIN_TOKEN' }],
        homeChannel: null,
      });
      expect(new ConfiguredPlatforms({ plain: { token: 'abcd' } }, {}, specs).status('plain')).toMatchObject({
        configured: true,
        missing: [],
      });
    });

    it('needs the required keys and one complete alternative, naming both when both are missing', () => {
      expect(missingOf(new ConfiguredPlatforms({}, {}, specs), 'both')).toEqual(['url', 'user', 'password']);
      expect(missingOf(new ConfiguredPlatforms({ both: { api_key: 'k-1234' } }, {}, specs), 'both')).toEqual(['url']);
      expect(missingOf(new ConfiguredPlatforms({ both: { url: 'http://x', password: 'pw-1234' } }, {}, specs), 'both')).toEqual(['user']);
      expect(new ConfiguredPlatforms({ both: { url: 'http://x', api_key: 'k-1234' } }, {}, specs).status('both')!.configured).toBe(true);
    });

    it('keeps every other platform of the catalog as it was', () => {
      const platforms = new ConfiguredPlatforms({ telegram: { bot_token: '123:abc' } }, {});
      expect(platforms.status('telegram')).toMatchObject({ configured: true, missing: [], homeChannel: null });
      expect(platforms.status('slack')).toMatchObject({
        configured: false,
        missing: [{ key: 'bot_token', variable: 'SLACK_BOT_TOKEN' }],
        homeChannel: null,
      });
      expect(missingOf(platforms, 'sms')).toEqual(['account_sid', 'auth_token', 'from']);
    });
  });
});
