/** A channel a platform listed (or an alias from config): its raw id and its display name. */
export interface DirectoryChannel {
  id: string;
  name: string;
}

export type ChannelMatch = { found: true; id: string } | { found: false; reason: 'unknown' | 'ambiguous'; candidates: string[] };

/**
 * Finds a named channel: an exact id, then a name compared case-insensitively,
 * then a unique prefix of a name. A leading `#` is not part of the name.
 */
export function matchChannel(channels: readonly DirectoryChannel[], query: string): ChannelMatch {
  const wanted = query.replace(/^#/, '').trim();
  const byId = channels.find((channel) => channel.id === wanted || channel.id === query);
  if (byId) return { found: true, id: byId.id };
  const lower = wanted.toLowerCase();
  const named = unique(channels.filter((channel) => bare(channel.name) === lower));
  if (named.length === 1) return { found: true, id: named[0]!.id };
  if (named.length > 1) return { found: false, reason: 'ambiguous', candidates: named.map(describe) };
  const prefixed = unique(channels.filter((channel) => bare(channel.name).startsWith(lower)));
  if (prefixed.length === 1 && lower !== '') return { found: true, id: prefixed[0]!.id };
  if (prefixed.length > 1) return { found: false, reason: 'ambiguous', candidates: prefixed.map(describe) };
  return { found: false, reason: 'unknown', candidates: [] };
}

/**
 * The channels a name is looked up in: the config's `channels` laid over what the platform
 * listed, so that an alias replaces a listed channel of the same name and adds the others. One
 * list, so that an exact name anywhere beats a prefix anywhere.
 */
export function channelsWithAliases(listed: readonly DirectoryChannel[], aliases: Readonly<Record<string, string>>): DirectoryChannel[] {
  const fromConfig = Object.entries(aliases).map(([name, id]) => ({ id, name }));
  const aliased = new Set(fromConfig.map((channel) => bare(channel.name)));
  return [...fromConfig, ...listed.filter((channel) => !aliased.has(bare(channel.name)))];
}

function bare(name: string): string {
  return name.replace(/^#/, '').toLowerCase();
}

/** The same id listed twice (an alias and the directory) is one channel. */
function unique(channels: DirectoryChannel[]): DirectoryChannel[] {
  const seen = new Map<string, DirectoryChannel>();
  for (const channel of channels) if (!seen.has(channel.id)) seen.set(channel.id, channel);
  return [...seen.values()];
}

function describe(channel: DirectoryChannel): string {
  return `#${bare(channel.name)} (${channel.id})`;
}
