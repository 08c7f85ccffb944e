import type { MemoryStore, SkillLibrary } from '../../../src/application/ports/ContextFiles.js';
import type { ContextDocument } from '../../../src/domain/RunContext.js';

export class FakeMemoryStore implements MemoryStore {
  constructor(readonly documents: ContextDocument[] = []) {}

  async load(): Promise<ContextDocument[]> {
    return [...this.documents];
  }
}

export class FakeSkillLibrary implements SkillLibrary {
  constructor(readonly skills: Record<string, string> = {}) {}

  async find(name: string): Promise<string | null> {
    return this.skills[name] ?? null;
  }
}
