import { WorkdirError, type WorkingDirectories } from '../../../src/application/ports/WorkingDirectories.js';

/**
 * Working folders in memory: `folders` maps each folder that exists (absolute) to its AGENTS.md
 * text, or null when it has none. A relative path is read from `/workspace`, as the file adapter
 * reads it from `$AGENT_HOME/workspace`.
 */
export class FakeWorkingDirectories implements WorkingDirectories {
  constructor(readonly folders: Map<string, string | null> = new Map()) {}

  async check(path: string): Promise<string> {
    const folder = path.startsWith('/') ? path : `/workspace/${path}`;
    if (!this.folders.has(folder))
      throw new WorkdirError(`The working folder ${folder} does not exist; create it first, or name an existing folder.`);
    return folder;
  }

  async instructions(folder: string): Promise<string | null> {
    return this.folders.get(folder) ?? null;
  }
}
