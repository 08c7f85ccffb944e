import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import { ERROR_CODES } from '../../domain/errorCodes.js';
import type { SkillLibrary } from '../../application/ports/ContextFiles.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { FileStoreError } from './FileStoreError.js';
import { fileStoreError, errnoCode, isPlainPathSegment, readTextIfPresent } from './fileSystem.js';

const SKILL_FILE_NAME = 'SKILL.md';

/** Skills in `$AGENT_HOME/skills/<name>/SKILL.md` or `$AGENT_HOME/skills/<category>/<name>/SKILL.md`. */
@injectable()
export class FileSkillLibrary implements SkillLibrary {
  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {}

  /**
   * The SKILL.md of the named skill: directly under the skills directory first, else under the
   * first category (in name order) that has it. Null when no such skill exists, when the skills
   * directory is missing, and for a name that is not a plain directory name (`a/b`, `..`), so a
   * job cannot read files outside the skills directory. Throws `CONTEXT.UNREADABLE` when the
   * file exists but cannot be read.
   */
  async find(name: string): Promise<string | null> {
    if (!isPlainPathSegment(name)) return null;
    const direct = await readTextIfPresent(join(this.paths.skillsDir, name, SKILL_FILE_NAME));
    if (direct !== null) return direct;
    for (const category of await this.categories()) {
      const nested = await readTextIfPresent(join(this.paths.skillsDir, category, name, SKILL_FILE_NAME));
      if (nested !== null) return nested;
    }
    return null;
  }

  /** Every entry of the skills directory, sorted; entries that are not directories simply hold no skills. */
  private async categories(): Promise<string[]> {
    try {
      return (await readdir(this.paths.skillsDir)).sort();
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw new FileStoreError(
        ERROR_CODES.CONTEXT.UNREADABLE,
        `${fileStoreError('list', this.paths.skillsDir, error)}; fix its permissions.`,
        { cause: error },
      );
    }
  }
}
