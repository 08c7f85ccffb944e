import type { Tool, ToolCallContext, ToolSpec } from '../../src/application/agent/ports/Tool.js';
import type { ToolCatalog } from '../../src/application/agent/ports/ToolCatalog.js';
import { toolsInToolsets } from '../../src/domain/toolsets.js';

type Answer = (args: Record<string, unknown>, context: ToolCallContext) => string | Promise<string>;

/** A tool that records its calls and answers with `answer` (default: "done"). */
export class RecordingTool implements Tool {
  readonly calls: Array<{ args: Record<string, unknown>; unattended: boolean; privateNetworks?: boolean }> = [];
  readonly spec: ToolSpec;

  constructor(
    name: string,
    private readonly answer: Answer = () => 'done',
  ) {
    this.spec = {
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', properties: { input: { type: 'string' } }, additionalProperties: true },
    };
  }

  async call(args: Record<string, unknown>, context: ToolCallContext): Promise<string> {
    this.calls.push({ args, unattended: context.unattended, privateNetworks: context.privateNetworks });
    return this.answer(args, context);
  }
}

/**
 * A catalog of the given tools that, like the real one, hands out those the requested toolsets
 * hold (src/domain/toolsets.ts), and records what was asked.
 */
export class FixedToolCatalog implements ToolCatalog {
  readonly requested: Array<readonly string[]> = [];

  constructor(private readonly tools: readonly Tool[]) {}

  async toolsFor(toolsets: readonly string[]): Promise<Tool[]> {
    this.requested.push(toolsets);
    const names = toolsInToolsets(toolsets);
    return this.tools.filter((tool) => names.includes(tool.spec.name));
  }
}

/** A recording tool for every tool name any toolset holds, the job tool included. */
export function everyTool(): RecordingTool[] {
  return toolsInToolsets(['agent-chat']).map((name) => new RecordingTool(name));
}
