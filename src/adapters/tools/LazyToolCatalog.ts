import type { Tool } from '../../application/agent/ports/Tool.js';
import type { ToolCatalog } from '../../application/agent/ports/ToolCatalog.js';

/**
 * A catalog whose tools are loaded when the first session asks for them: the tools' modules
 * (an HTML converter, an address parser, the job tool's use cases) are not parsed by commands
 * that run no agent. A load that fails is not remembered, so the next session tries again.
 */
export class LazyToolCatalog implements ToolCatalog {
  private loaded: Promise<ToolCatalog> | null = null;

  constructor(private readonly load: () => Promise<ToolCatalog>) {}

  async toolsFor(toolsets: readonly string[]): Promise<Tool[]> {
    if (this.loaded === null) {
      const loading = this.load();
      this.loaded = loading;
      loading.catch(() => {
        if (this.loaded === loading) this.loaded = null;
      });
    }
    return (await this.loaded).toolsFor(toolsets);
  }
}
