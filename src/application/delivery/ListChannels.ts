import { inject, injectable } from 'inversify';
import type { ChannelDirectoryStore } from '../ports/ChannelDirectory.js';
import type { Platforms } from '../ports/Platforms.js';
import { TOKENS } from '../ports/tokens.js';

export interface ListedChannel {
  platform: string;
  id: string;
  name: string;
  /** `directory`: listed by the platform; `config`: an alias from `platforms.<name>.channels`. */
  source: 'directory' | 'config';
}

export interface ChannelList {
  /** When the directory was last built; null when never. */
  updatedAt: string | null;
  channels: ListedChannel[];
}

/** The channel directory as delivery sees it: config aliases first, then what the platforms listed. */
@injectable()
export class ListChannels {
  constructor(
    @inject(TOKENS.Platforms) private readonly platforms: Platforms,
    @inject(TOKENS.ChannelDirectoryStore) private readonly store: ChannelDirectoryStore,
  ) {}

  async execute(input: { platform?: string } = {}): Promise<ChannelList> {
    const snapshot = await this.store.load();
    const channels: ListedChannel[] = [];
    for (const status of this.platforms.statuses()) {
      if (input.platform !== undefined && status.platform !== input.platform) continue;
      for (const [name, id] of Object.entries(status.aliases)) channels.push({ platform: status.platform, id, name, source: 'config' });
      for (const channel of snapshot.platforms[status.platform] ?? []) {
        channels.push({ platform: status.platform, id: channel.id, name: channel.name, source: 'directory' });
      }
    }
    return { updatedAt: snapshot.updatedAt, channels };
  }
}
