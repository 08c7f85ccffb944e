import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import type { ContextDocument } from '../../domain/RunContext.js';
import type { MemoryStore } from '../../application/ports/ContextFiles.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { ChangeAwareTextFiles } from './fileSystem.js';

/** The memory files, in the order a run is given them. */
const MEMORY_FILE_NAMES = ['MEMORY.md', 'USER.md'] as const;

/**
 * Memory files in `$AGENT_HOME/memories/`, read before every run: a file is read again only when
 * it has changed since the last run (ChangeAwareTextFiles), so a busy webhook worker does not
 * re-read unchanged files for every event; an edit is seen by the next run.
 */
@injectable()
export class FileMemoryStore implements MemoryStore {
  private readonly files: ChangeAwareTextFiles;

  constructor(@inject(TOKENS.AgentPaths) paths: AgentPaths) {
    this.files = new ChangeAwareTextFiles(MEMORY_FILE_NAMES.map((name) => join(paths.memoriesDir, name)));
  }

  /**
   * MEMORY.md then USER.md, each named by its file name and given as written; a file that is
   * missing or holds only white space is left out. Throws `CONTEXT.UNREADABLE` when a file
   * exists but cannot be read.
   */
  async load(): Promise<ContextDocument[]> {
    const contents = await this.files.read();
    return MEMORY_FILE_NAMES.flatMap((name, index) => {
      const content = contents[index];
      return content != null && content.trim() !== '' ? [{ name, content }] : [];
    });
  }
}
