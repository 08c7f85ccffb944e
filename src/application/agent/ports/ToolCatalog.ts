import type { Tool } from './Tool.js';

/** The tools a session may use, resolved from toolset names (src/domain/toolsets.ts). */
export interface ToolCatalog {
  /**
   * The tools the named toolsets hold and this host can offer; tools it cannot offer are left
   * out. Asynchronous so that a catalog may load its tools on the first session that needs them.
   */
  toolsFor(toolsets: readonly string[]): Promise<Tool[]>;
}
