import type { DirectoryChannel } from '../../domain/delivery/channelDirectory.js';

/** The channels each platform listed at the last refresh. */
export interface ChannelDirectorySnapshot {
  /** ISO 8601 UTC time of the last refresh; null when the directory was never built. */
  updatedAt: string | null;
  /** Platform name → its channels; a platform absent here was never listed. */
  platforms: Record<string, DirectoryChannel[]>;
}

/** Where the channel directory is kept between the gateway's refreshes and other processes' reads. */
export interface ChannelDirectoryStore {
  /** The last saved snapshot; an empty one when none was ever saved or it cannot be read. */
  load(): Promise<ChannelDirectorySnapshot>;
  /** Replaces the snapshot atomically: a reader sees the old or the new one, never a mix. */
  save(snapshot: ChannelDirectorySnapshot): Promise<void>;
}
