import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Container, inject, injectable } from 'inversify';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../../src/adapters/config/tokens.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import { ClarifyTool } from '../../../src/adapters/tools/ClarifyTool.js';
import { DefaultToolCatalog } from '../../../src/adapters/tools/DefaultToolCatalog.js';
import { TerminalTool } from '../../../src/adapters/tools/TerminalTool.js';
import type { Tool, ToolCatalog, ToolSpec } from '../../../src/adapters/tools/Tool.js';
import { TOOL_TOKENS } from '../../../src/adapters/tools/tokens.js';
import { publicAddressesOnly } from '../../../src/adapters/tools/publicAddresses.js';
import { WebExtractTool } from '../../../src/adapters/tools/WebExtractTool.js';
import { WebSearchTool } from '../../../src/adapters/tools/WebSearchTool.js';
import { TOKENS } from '../../../src/application/ports/tokens.js';
import { cronRunToolsets } from '../../../src/domain/toolsets.js';
import { RecordingLogger } from '../../fakes/RecordingLogger.js';

class StubTool implements Tool {
  readonly spec: ToolSpec;

  constructor(
    name: string,
    private readonly available = true,
  ) {
    this.spec = { name, description: name, parameters: { type: 'object', properties: {} } };
  }

  async call(): Promise<string> {
    return this.spec.name;
  }

  isAvailable(): boolean {
    return this.available;
  }
}

const names = (tools: Tool[]) => tools.map((tool) => tool.spec.name);

function catalog(options: { search?: boolean } = {}) {
  let jobToolResolutions = 0;
  const tools = [
    new StubTool('terminal'),
    new StubTool('web_search', options.search ?? true),
    new StubTool('web_extract'),
    new StubTool('clarify'),
  ];
  const subject = new DefaultToolCatalog(tools, () => {
    jobToolResolutions += 1;
    return new StubTool('cronjob');
  });
  return { subject, jobToolResolutions: () => jobToolResolutions };
}

describe('DefaultToolCatalog', () => {
  it('gives an interactive chat every tool, the job tool included', () => {
    expect(names(catalog().subject.toolsFor(['agent-chat']))).toEqual(['cronjob', 'terminal', 'web_search', 'web_extract', 'clarify']);
  });

  it('never gives a cron run the job tool, and never resolves it for one', () => {
    const { subject, jobToolResolutions } = catalog();

    expect(names(subject.toolsFor(cronRunToolsets()))).toEqual(['terminal', 'web_search', 'web_extract', 'clarify']);
    expect(jobToolResolutions()).toBe(0);
  });

  it('gives webhook runs no terminal', () => {
    expect(names(catalog().subject.toolsFor(['agent-webhook']))).toEqual(['web_search', 'web_extract', 'clarify']);
  });

  it('leaves web_search out when no search backend is configured', () => {
    const { subject } = catalog({ search: false });

    expect(names(subject.toolsFor(['web']))).toEqual(['web_extract']);
    expect(names(subject.toolsFor(['agent-chat']))).not.toContain('web_search');
  });

  it('resolves the job tool once, however often it is asked for', () => {
    const { subject, jobToolResolutions } = catalog();

    const first = subject.toolsFor(['cronjob']);
    const second = subject.toolsFor(['agent-chat']);

    expect(second[0]).toBe(first[0]);
    expect(jobToolResolutions()).toBe(1);
  });

  it('offers no job tool on a host that has none, and skips unknown toolsets', () => {
    const subject = new DefaultToolCatalog([new StubTool('clarify')]);

    expect(names(subject.toolsFor(['cronjob', 'clarify', 'teleport', 'terminal']))).toEqual(['clarify']);
  });

  it('refuses two tools of the same name', () => {
    expect(() => new DefaultToolCatalog([new StubTool('clarify'), new StubTool('clarify')])).toThrow(/"clarify" is given twice/);
  });
});

/** Stands in for the agent runner, which needs the catalog, as the real one does. */
@injectable()
class RunnerNeedingTheCatalog {
  constructor(@inject(TOOL_TOKENS.ToolCatalog) readonly catalog: ToolCatalog) {}
}

/** Stands in for the job tool, which needs (through the use cases) the agent runner. */
@injectable()
class JobToolNeedingTheRunner extends StubTool {
  constructor(@inject(RunnerNeedingTheCatalog) readonly runner: RunnerNeedingTheCatalog) {
    super('cronjob');
  }
}

describe('DefaultToolCatalog in a container', () => {
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'agent-catalog-'));
  });

  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('is built with the real tools, and the job tool is resolved lazily despite the cycle', () => {
    const config = { providers: {}, fallback_providers: [], platforms: {}, search: { searxng_url: 'http://127.0.0.1:8888' } };
    const container = new Container({ defaultScope: 'Singleton' });
    container.bind(TOKENS.AgentPaths).toConstantValue(agentPathsFor(home));
    container.bind(TOKENS.Logger).toConstantValue(new RecordingLogger());
    container.bind(TOKENS.ProcessTreeKiller).toConstantValue(new PosixProcessTreeKiller());
    container.bind(CONFIG_TOKENS.AgentConfig).toConstantValue(config as unknown as AgentConfig);
    container.bind(TOOL_TOKENS.PublicAddressPolicy).toConstantValue(publicAddressesOnly);
    for (const tool of [TerminalTool, WebSearchTool, WebExtractTool, ClarifyTool]) container.bind(TOOL_TOKENS.Tool).to(tool);
    container.bind(TOOL_TOKENS.JobTool).toFactory((context) => () => context.get(JobToolNeedingTheRunner));
    container.bind(JobToolNeedingTheRunner).toSelf();
    container.bind(RunnerNeedingTheCatalog).toSelf();
    container.bind(TOOL_TOKENS.ToolCatalog).to(DefaultToolCatalog);

    const runner = container.get(RunnerNeedingTheCatalog);
    const tools = runner.catalog.toolsFor(['agent-chat']);

    expect(names(tools)).toEqual(['cronjob', 'terminal', 'web_search', 'web_extract', 'clarify']);
    expect((tools[0] as JobToolNeedingTheRunner).runner).toBe(runner);
  });
});
