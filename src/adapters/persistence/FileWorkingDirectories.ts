import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { inject, injectable } from 'inversify';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { WorkdirError, type WorkingDirectories } from '../../application/ports/WorkingDirectories.js';
import { isWithin } from '../../domain/sandboxPlan.js';
import { displayPath } from '../shared/displayPath.js';
import { errnoCode, readTextIfPresent } from './fileSystem.js';

/** The file a job's working folder may hold with instructions for the agent. */
export const AGENTS_FILE_NAME = 'AGENTS.md';

/**
 * Job working folders on this machine's file system (docs/cron.md, Working folder). A relative
 * path is read from the workspace, the terminal's folder without one. The agent's home stays
 * closed: a folder that is it, holds it or lies in it (but for the workspace and below) is
 * refused, since the job's commands may write their working folder.
 */
@injectable()
export class FileWorkingDirectories implements WorkingDirectories {
  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {}

  async check(path: string): Promise<string> {
    const written = path.trim();
    if (written === '' || written.includes('\0')) {
      throw new WorkdirError(
        `The working folder ${JSON.stringify(path)} is not a path; give an absolute path, or one relative to the workspace.`,
      );
    }
    const workspace = resolve(this.paths.home, 'workspace');
    const folder = resolve(workspace, written);
    const home = resolve(this.paths.home);
    if (folder === '/' || isWithin(folder, home) || (isWithin(home, folder) && !isWithin(workspace, folder))) {
      throw new WorkdirError(
        `The working folder ${displayPath(folder)} would let the job's commands write the agent's home ${displayPath(home)}; choose a folder outside it, or inside its workspace.`,
      );
    }
    let isFolder: boolean;
    try {
      isFolder = (await stat(folder)).isDirectory();
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        throw new WorkdirError(`The working folder ${displayPath(folder)} does not exist; create it first, or name an existing folder.`);
      }
      throw new WorkdirError(
        `The working folder ${displayPath(folder)} cannot be examined (${code ?? String(error)}); check its permissions.`,
      );
    }
    if (!isFolder) throw new WorkdirError(`The working folder ${displayPath(folder)} is not a folder; name a folder.`);
    return folder;
  }

  async instructions(folder: string): Promise<string | null> {
    const text = await readTextIfPresent(join(folder, AGENTS_FILE_NAME));
    return text === null || text.trim() === '' ? null : text;
  }
}
