import { inject, injectable } from 'inversify';
import { errorText } from '../../domain/errors.js';
import type { ChannelDirectorySnapshot, ChannelDirectoryStore } from '../ports/ChannelDirectory.js';
import type { Clock } from '../ports/Clock.js';
import type { Logger } from '../ports/Logger.js';
import type { Platforms } from '../ports/Platforms.js';
import { TOKENS } from '../ports/tokens.js';

/** How listing one platform's channels went. */
export type ChannelListing = { platform: string; channels: number } | { platform: string; error: string };

export interface RefreshReport {
  snapshot: ChannelDirectorySnapshot;
  listings: ChannelListing[];
}

/**
 * Rebuilds the channel directory from every configured platform that can list its channels
 * (the gateway at start and every 5 minutes, `agent channels list --refresh`). A platform that
 * cannot be listed now keeps what was listed before; a platform no longer configured is dropped.
 * With no platform to list, nothing is written.
 */
@injectable()
export class RefreshChannelDirectory {
  constructor(
    @inject(TOKENS.Platforms) private readonly platforms: Platforms,
    @inject(TOKENS.ChannelDirectoryStore) private readonly store: ChannelDirectoryStore,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  async execute(): Promise<RefreshReport> {
    const previous = await this.store.load();
    const listable = this.platforms.statuses().filter((status) => status.configured && status.listsChannels);
    if (listable.length === 0) return { snapshot: previous, listings: [] };
    const listings = await Promise.all(
      listable.map(async ({ platform }): Promise<ChannelListing & { list?: ChannelDirectorySnapshot['platforms'][string] }> => {
        try {
          const sender = await this.platforms.sender(platform);
          const list = (await sender.listChannels?.()) ?? [];
          return { platform, channels: list.length, list };
        } catch (error) {
          this.log.warn(`could not list the channels of ${platform}: ${errorText(error)}`);
          return { platform, error: errorText(error) };
        }
      }),
    );
    const platforms: ChannelDirectorySnapshot['platforms'] = {};
    for (const listing of listings) {
      const list = 'list' in listing ? listing.list : previous.platforms[listing.platform];
      if (list !== undefined) platforms[listing.platform] = list;
    }
    const snapshot = { updatedAt: this.clock.now().toISOString(), platforms };
    await this.store.save(snapshot);
    return { snapshot, listings: listings.map(({ list: _list, ...listing }) => listing) };
  }
}
