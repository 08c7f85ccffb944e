import { inject, injectable, multiInject, optional } from 'inversify';
import { toolsInToolsets } from '../../domain/toolsets.js';
import { CRON_JOB_TOOL_NAME } from './CronJobTool.js';
import type { Tool, ToolCatalog } from './Tool.js';
import { TOOL_TOKENS } from './tokens.js';

/**
 * The tools of this host, handed out by toolset name (src/domain/toolsets.ts). A tool that says
 * it is not available (web_search without a backend) is left out, as is a tool the host does
 * not have.
 *
 * The job tool comes as a thunk, resolved the first time a session asks for `cronjob`: it
 * needs the job use cases, whose run path needs the agent runner, which needs this catalog, so
 * taking the tool itself here would make a cycle no container can build. Cron runs never ask
 * for it (rule 3), so they never resolve it.
 */
@injectable()
export class DefaultToolCatalog implements ToolCatalog {
  private readonly tools = new Map<string, Tool>();
  private jobTool: Tool | null = null;

  constructor(
    @multiInject(TOOL_TOKENS.Tool) tools: readonly Tool[],
    @inject(TOOL_TOKENS.JobTool) @optional() private readonly resolveJobTool: (() => Tool) | null = null,
  ) {
    for (const tool of tools) {
      if (this.tools.has(tool.spec.name)) {
        throw new Error(`DefaultToolCatalog: the tool "${tool.spec.name}" is given twice.`);
      }
      this.tools.set(tool.spec.name, tool);
    }
  }

  toolsFor(toolsets: readonly string[]): Tool[] {
    return toolsInToolsets(toolsets).flatMap((name) => {
      const tool = this.tools.get(name) ?? (name === CRON_JOB_TOOL_NAME ? this.theJobTool() : null);
      return tool && (tool.isAvailable?.() ?? true) ? [tool] : [];
    });
  }

  private theJobTool(): Tool | null {
    if (this.jobTool === null && this.resolveJobTool !== null) this.jobTool = this.resolveJobTool();
    return this.jobTool;
  }
}
