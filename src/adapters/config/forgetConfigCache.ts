import { rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Removes `$AGENT_HOME/cache/config.json`, where earlier versions kept the validated config.yaml,
 * secrets included: config.yaml is often a read-only secret mount while the home is a data volume
 * that gets backed up. The `cache` directory goes too when nothing else is in it. Best effort and
 * quiet: a home that cannot be written to keeps what it has.
 */
export async function forgetConfigCache(home: string): Promise<void> {
  const directory = join(home, 'cache');
  try {
    await rm(join(directory, 'config.json'), { force: true });
    await rmdir(directory);
  } catch {
    // Absent, not empty, or not ours to change.
  }
}
