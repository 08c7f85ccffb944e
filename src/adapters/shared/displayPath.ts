import { homedir } from 'node:os';
import { sep } from 'node:path';

/**
 * `path` as a person would type it: the home directory written as `~`, so messages stay short
 * and do not spell out the user's home in logs they might paste somewhere.
 */
export function displayPath(path: string, home: string = homedir()): string {
  if (home && (path === home || path.startsWith(home + sep))) return `~${path.slice(home.length)}`;
  return path;
}
