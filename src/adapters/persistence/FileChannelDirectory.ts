import { dirname } from 'node:path';
import { inject, injectable } from 'inversify';
import type { ChannelDirectorySnapshot, ChannelDirectoryStore } from '../../application/ports/ChannelDirectory.js';
import type { Logger } from '../../application/ports/Logger.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import type { DirectoryChannel } from '../../domain/delivery/channelDirectory.js';
import { errorText } from '../../domain/errors.js';
import { isJsonObject } from '../../domain/webhook/payloadPath.js';
import { ensurePrivateDirectory, readTextIfPresent, withoutByteOrderMark, writeFileDurably } from './fileSystem.js';

const EMPTY: ChannelDirectorySnapshot = { updatedAt: null, platforms: {} };

/**
 * `$AGENT_HOME/channel_directory.json`: `{"updated_at", "platforms": {"slack": [{"id", "name"}]}}`,
 * written whole and atomically. A file that cannot be read or understood counts as an empty
 * directory (raw ids still work) and is logged; the next refresh replaces it.
 */
@injectable()
export class FileChannelDirectory implements ChannelDirectoryStore {
  constructor(
    @inject(TOKENS.AgentPaths) private readonly paths: AgentPaths,
    @inject(TOKENS.Logger) private readonly log: Logger,
  ) {}

  async load(): Promise<ChannelDirectorySnapshot> {
    const file = this.paths.channelDirectoryFile;
    let text: string | null;
    try {
      text = await readTextIfPresent(file);
    } catch (error) {
      this.log.warn(`the channel directory cannot be read; named channels will not resolve until it is refreshed: ${errorText(error)}`);
      return EMPTY;
    }
    if (text === null) return EMPTY;
    try {
      return snapshotFrom(JSON.parse(withoutByteOrderMark(text)));
    } catch {
      this.log.warn(
        `${file} is not a channel directory; named channels will not resolve until "agent channels list --refresh" rebuilds it`,
      );
      return EMPTY;
    }
  }

  async save(snapshot: ChannelDirectorySnapshot): Promise<void> {
    await ensurePrivateDirectory(dirname(this.paths.channelDirectoryFile));
    const text = JSON.stringify({ updated_at: snapshot.updatedAt, platforms: snapshot.platforms }, null, 2);
    await writeFileDurably(this.paths.channelDirectoryFile, `${text}\n`);
  }
}

function snapshotFrom(value: unknown): ChannelDirectorySnapshot {
  if (!isJsonObject(value) || !isJsonObject(value.platforms)) throw new Error('not a directory');
  const platforms: Record<string, DirectoryChannel[]> = {};
  for (const [platform, list] of Object.entries(value.platforms)) {
    if (!Array.isArray(list)) continue;
    platforms[platform] = list
      .filter((item): item is DirectoryChannel => isJsonObject(item) && typeof item.id === 'string' && typeof item.name === 'string')
      .map(({ id, name }) => ({ id, name }));
  }
  return { updatedAt: typeof value.updated_at === 'string' ? value.updated_at : null, platforms };
}
