import type { ContextDocument } from '../../domain/RunContext.js';

/** The persistent memory files loaded into every run. */
export interface MemoryStore {
  /** MEMORY.md then USER.md, whichever exist and are not empty; [] when none. */
  load(): Promise<ContextDocument[]>;
}

/** Reusable instruction files, each a SKILL.md under the skills directory. */
export interface SkillLibrary {
  /** The skill's SKILL.md content, looked up by name (also one category level deeper); null when absent. */
  find(name: string): Promise<string | null>;
}
