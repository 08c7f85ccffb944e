import type { Tool } from '../../application/agent/ports/Tool.js';
import type { ToolCatalog } from '../../application/agent/ports/ToolCatalog.js';
import { toolsInToolsets } from '../../domain/toolsets.js';

/**
 * The tools of this host, handed out by toolset name (src/domain/toolsets.ts). A tool that says
 * it is not available (web_search without a backend) is left out, as is a tool the catalog does
 * not hold: the catalog of job runs holds no job tool, so no toolset can bring it in.
 */
export class DefaultToolCatalog implements ToolCatalog {
  private readonly tools = new Map<string, Tool>();

  constructor(tools: readonly Tool[]) {
    for (const tool of tools) {
      if (this.tools.has(tool.spec.name)) {
        throw new Error(`DefaultToolCatalog: the tool "${tool.spec.name}" is given twice.`);
      }
      this.tools.set(tool.spec.name, tool);
    }
  }

  async toolsFor(toolsets: readonly string[]): Promise<Tool[]> {
    return toolsInToolsets(toolsets).flatMap((name) => {
      const tool = this.tools.get(name);
      return tool && (tool.isAvailable?.() ?? true) ? [tool] : [];
    });
  }
}
