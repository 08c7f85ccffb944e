import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRIVATE_DIRECTORY_MODE, writeFileAtomically } from '../persistence/fileSystem.js';
import { displayPath } from '../shared/displayPath.js';
import type { LoadedConfig } from './AgentConfig.js';

/** What the cache file holds: the key the result belongs to, and the result. */
interface CacheEntry {
  key: string;
  loaded: LoadedConfig;
}

/**
 * config.yaml, validated, as YamlConfigLoader reads it, with the result kept in
 * `$AGENT_HOME/cache/config.json` (0600) and reused while nothing it depends on changed: the
 * file's bytes, how its path is shown in messages, and this build of the program. Reading the
 * YAML and checking it against the schema loads two large libraries; a command that finds the
 * cache current loads neither (`agent cron list` starts about 15 ms sooner).
 *
 * A file that does not load (bad YAML, a wrong value) is never cached: the error is thrown every
 * time, as before. A cache that cannot be read or written is ignored; the result is the same.
 * The warnings of a cached result are returned again, so they are shown on every command.
 */
export class CachedConfigLoader {
  constructor(
    private readonly configFile: string,
    private readonly cacheFile: string,
    /** The program's version; the build's own time is part of the key too. */
    private readonly programVersion: string,
  ) {}

  /** The cache file of a home: `<home>/cache/config.json`. */
  static cacheFileOf(home: string): string {
    return join(home, 'cache', 'config.json');
  }

  /** The configuration. Throws ConfigError `CONFIG.*` as YamlConfigLoader does. */
  async load(): Promise<LoadedConfig> {
    const key = await this.keyOf(await this.readSource());
    const cached = await this.readCache();
    if (cached?.key === key) return cached.loaded;
    const { YamlConfigLoader } = await import('./YamlConfigLoader.js');
    const loaded = new YamlConfigLoader(this.configFile).load();
    await this.writeCache({ key, loaded });
    return loaded;
  }

  private async readSource(): Promise<Buffer | null> {
    try {
      return await readFile(this.configFile);
    } catch {
      // Missing or unreadable: the validating loader says which, or applies the defaults.
      return null;
    }
  }

  private async keyOf(source: Buffer | null): Promise<string> {
    const hash = createHash('sha256');
    hash.update(`${this.programVersion}\0${await buildTime()}\0${displayPath(this.configFile)}\0`);
    hash.update(source === null ? '\0no file' : source);
    return hash.digest('hex');
  }

  private async readCache(): Promise<CacheEntry | null> {
    try {
      const entry = JSON.parse(await readFile(this.cacheFile, 'utf8')) as Partial<CacheEntry>;
      const loaded = entry.loaded;
      if (typeof entry.key !== 'string' || !loaded || typeof loaded.config !== 'object' || !Array.isArray(loaded.warnings)) return null;
      return { key: entry.key, loaded };
    } catch {
      return null;
    }
  }

  private async writeCache(entry: CacheEntry): Promise<void> {
    try {
      await mkdir(dirname(this.cacheFile), { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
      await writeFileAtomically(this.cacheFile, JSON.stringify(entry));
    } catch {
      // A home that cannot be written to (read-only, full) only costs the next command the check.
    }
  }
}

let buildTimeOnce: Promise<string> | null = null;

/** When this module's file was written: a new build of the program never reuses an older build's result. */
function buildTime(): Promise<string> {
  buildTimeOnce ??= stat(fileURLToPath(import.meta.url)).then(
    (stats) => String(stats.mtimeMs),
    () => 'unknown',
  );
  return buildTimeOnce;
}
