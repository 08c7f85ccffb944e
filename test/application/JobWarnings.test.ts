import { PlatformDelivery } from '../../src/application/delivery/PlatformDelivery.js';
import { JobWarnings } from '../../src/application/cron/JobWarnings.js';
import { ERROR_CODES } from '../../src/domain/errorCodes.js';
import { AppError } from '../../src/domain/errors.js';
import type { Job } from '../../src/domain/Job.js';
import { FakeSkillLibrary } from '../support/fakes/FakeContextFiles.js';
import { FakePlatforms } from '../support/fakes/FakePlatforms.js';
import { InMemoryChannelDirectory } from '../support/fakes/InMemoryChannelDirectory.js';
import { RecordingLogger } from '../support/fakes/RecordingLogger.js';
import { RecordingTimer } from '../support/fakes/RecordingTimer.js';
import { SequentialIds } from '../support/fakes/SequentialIds.js';
import { anHourlyJob } from '../support/jobs.js';

/** JobWarnings over the real delivery preflight, on fake platforms, directory and skills. */
function warningsWith(options: { skills?: Record<string, string>; directory?: InMemoryChannelDirectory } = {}) {
  const platforms = new FakePlatforms([
    { platform: 'telegram', homeChannel: '-100123', aliases: { ops: '-100456' } },
    { platform: 'slack', homeChannel: null, listsChannels: true },
    { platform: 'discord', configured: false, missing: [{ key: 'bot_token', variable: 'DISCORD_BOT_TOKEN' }] },
  ]);
  const directory =
    options.directory ??
    new InMemoryChannelDirectory({ updatedAt: '2026-06-01T08:00:00.000Z', platforms: { slack: [{ id: 'C0123ABCDEF', name: 'alerts' }] } });
  const delivery = new PlatformDelivery(platforms, directory, new RecordingTimer(), new SequentialIds(), new RecordingLogger());
  return new JobWarnings(delivery, new FakeSkillLibrary(options.skills ?? {}));
}

const job = (changes: Partial<Job>): Job => ({ ...anHourlyJob('000000000001'), ...changes });

describe('JobWarnings', () => {
  it('says nothing about a job whose targets and skills are all there', async () => {
    const warnings = warningsWith({ skills: { triage: '# Triage' } });

    expect(
      await warnings.about(job({ deliver: 'local,origin,telegram,telegram:#ops,slack:#alerts,slack:C0999ZZZZZZ', skills: ['triage'] })),
    ).toEqual([]);
  });

  it('names the missing setting of a platform that is not configured, once however often the job names it', async () => {
    expect(await warningsWith().about(job({ deliver: 'discord,discord:123456789012345678' }))).toEqual([
      'Delivery platform "discord" is not configured: set platforms.discord.bot_token (or DISCORD_BOT_TOKEN) in config.yaml or the environment.',
    ]);
  });

  it('names a bare platform without a home channel', async () => {
    expect(await warningsWith().about(job({ deliver: 'slack' }))).toEqual([
      expect.stringMatching(/^Delivery platform "slack" has no home channel: set platforms\.slack\.home_channel/),
    ]);
  });

  it('names a #channel that neither config nor the channel directory knows, saying how to look', async () => {
    expect(await warningsWith().about(job({ deliver: 'slack:#nowhere,telegram:#nowhere' }))).toEqual([
      'Delivery target "slack:#nowhere" cannot be resolved now: the slack channel "#nowhere" is unknown; run "agent channels list --refresh" to see the channels the bot can post to, or use the channel id.',
      'Delivery target "telegram:#nowhere" cannot be resolved now: the telegram channel "#nowhere" is unknown; name it under platforms.telegram.channels in config.yaml, or use the chat id.',
    ]);
  });

  it('names a channel name that matches several channels', async () => {
    const directory = new InMemoryChannelDirectory({
      updatedAt: null,
      platforms: {
        slack: [
          { id: 'C01', name: 'deploys' },
          { id: 'C02', name: 'deploy-staging' },
        ],
      },
    });

    expect(await warningsWith({ directory }).about(job({ deliver: 'slack:#depl' }))).toEqual([
      'Delivery target "slack:#depl" cannot be resolved now: the slack channel "#depl" matches several channels (#deploys (C01), #deploy-staging (C02)); use the full name or the channel id.',
    ]);
  });

  it('names a #channel on a platform whose directory was never built', async () => {
    const warnings = warningsWith({ directory: new InMemoryChannelDirectory() });

    expect(await warnings.about(job({ deliver: 'slack:#alerts' }))).toEqual([
      expect.stringMatching(/^Delivery target "slack:#alerts" cannot be resolved now: the slack channel "#alerts" is unknown/),
    ]);
  });

  it('says nothing of a named channel on a platform that is not configured beyond that it is not', async () => {
    expect(await warningsWith().about(job({ deliver: 'discord:#ops' }))).toEqual([
      expect.stringMatching(/^Delivery platform "discord" is not configured/),
    ]);
  });

  it('names "all" when no platform has a home channel', async () => {
    const platforms = new FakePlatforms([{ platform: 'slack', homeChannel: null }]);
    const delivery = new PlatformDelivery(
      platforms,
      new InMemoryChannelDirectory(),
      new RecordingTimer(),
      new SequentialIds(),
      new RecordingLogger(),
    );

    expect(await new JobWarnings(delivery, new FakeSkillLibrary()).about(job({ deliver: 'all' }))).toEqual([
      'The delivery target "all" names no platform yet: none is configured with a home channel.',
    ]);
  });

  it('names each skill that is not found, after the targets', async () => {
    const warnings = warningsWith({ skills: { tone: '# Tone' } });

    expect(await warnings.about(job({ deliver: 'discord', skills: ['triage', 'tone', 'brevity'] }))).toEqual([
      expect.stringMatching(/^Delivery platform "discord"/),
      'The skill "triage" was not found: add skills/triage/SKILL.md under the agent home, or runs go on without it.',
      'The skill "brevity" was not found: add skills/brevity/SKILL.md under the agent home, or runs go on without it.',
    ]);
  });

  it('gives the sentence of a skill file that is there but cannot be read', async () => {
    const unreadable = {
      find: async () =>
        Promise.reject(new AppError(ERROR_CODES.CONTEXT.UNREADABLE, 'Cannot read skills/triage/SKILL.md: permission denied.')),
    };
    const delivery = new PlatformDelivery(
      new FakePlatforms([]),
      new InMemoryChannelDirectory(),
      new RecordingTimer(),
      new SequentialIds(),
      new RecordingLogger(),
    );

    expect(await new JobWarnings(delivery, unreadable).about(job({ deliver: 'local', skills: ['triage'] }))).toEqual([
      'Cannot read skills/triage/SKILL.md: permission denied.',
    ]);
  });
});
