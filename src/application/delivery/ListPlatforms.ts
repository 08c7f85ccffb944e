import { inject, injectable } from 'inversify';
import type { Platforms, PlatformStatus } from '../ports/Platforms.js';
import { TOKENS } from '../ports/tokens.js';

/** Every chat platform: configured or which keys are missing, and its home channel. */
@injectable()
export class ListPlatforms {
  constructor(@inject(TOKENS.Platforms) private readonly platforms: Platforms) {}

  execute(): PlatformStatus[] {
    return this.platforms.statuses();
  }
}
