import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's directory, where `plugins/cron_providers/` ships: the nearest directory
 * holding a package.json above the module at `moduleUrl` (dist/agent.js, a chunk under dist/, or
 * a source file when run from the sources), so it is dist/agent.js's parent's parent once installed.
 */
export function installationDirectory(moduleUrl: string): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(start);
  }
}
