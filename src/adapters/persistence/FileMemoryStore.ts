import { join } from 'node:path';
import { inject, injectable } from 'inversify';
import type { ContextDocument } from '../../domain/RunContext.js';
import type { MemoryStore } from '../../application/ports/ContextFiles.js';
import type { AgentPaths } from '../../application/ports/Settings.js';
import { TOKENS } from '../../application/ports/tokens.js';
import { readTextIfPresent } from './fileSystem.js';

/** The memory files, in the order a run is given them (decisions §5). */
const MEMORY_FILE_NAMES = ['MEMORY.md', 'USER.md'] as const;

/** Memory files in `$AGENT_HOME/memories/`. */
@injectable()
export class FileMemoryStore implements MemoryStore {
  constructor(@inject(TOKENS.AgentPaths) private readonly paths: AgentPaths) {}

  /**
   * MEMORY.md then USER.md, each named by its file name and given as written; a file that is
   * missing or holds only white space is left out. Throws `CONTEXT.UNREADABLE` when a file
   * exists but cannot be read.
   */
  async load(): Promise<ContextDocument[]> {
    const documents: ContextDocument[] = [];
    for (const name of MEMORY_FILE_NAMES) {
      const content = await readTextIfPresent(join(this.paths.memoriesDir, name));
      if (content !== null && content.trim() !== '') documents.push({ name, content });
    }
    return documents;
  }
}
