import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Container } from 'inversify';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../../src/adapters/config/tokens.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import { DefaultToolCatalog } from '../../../src/adapters/tools/DefaultToolCatalog.js';
import type { Tool, ToolSpec } from '../../../src/application/agent/ports/Tool.js';
import { CronJobTool } from '../../../src/adapters/tools/CronJobTool.js';
import { RUNTIME_TOKENS } from '../../../src/application/agent/ports/tokens.js';
import type { CronSettings } from '../../../src/application/ports/Settings.js';
import type { JobControl } from '../../../src/application/ports/JobControl.js';
import { toolCatalogsModule } from '../../../src/composition/modules/toolCatalogsModule.js';
import { TOKENS } from '../../../src/application/ports/tokens.js';
import { cronRunToolsets } from '../../../src/domain/toolsets.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';

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
  const tools = [
    new StubTool('cronjob'),
    new StubTool('terminal'),
    new StubTool('web_search', options.search ?? true),
    new StubTool('web_extract'),
    new StubTool('vision'),
    new StubTool('clarify'),
  ];
  return { subject: new DefaultToolCatalog(tools) };
}

describe('DefaultToolCatalog', () => {
  it('gives an interactive chat every tool, the job tool included', async () => {
    expect(names(await catalog().subject.toolsFor(['agent-chat']))).toEqual([
      'cronjob',
      'terminal',
      'web_search',
      'web_extract',
      'vision',
      'clarify',
    ]);
  });

  it('never gives a cron run the job tool, even from a catalog that holds it', async () => {
    const { subject } = catalog();

    expect(names(await subject.toolsFor(cronRunToolsets()))).toEqual(['terminal', 'web_search', 'web_extract', 'vision', 'clarify']);
  });

  it('gives webhook runs no terminal', async () => {
    expect(names(await catalog().subject.toolsFor(['agent-webhook']))).toEqual(['web_search', 'web_extract', 'vision', 'clarify']);
  });

  it('leaves web_search out when no search backend is configured', async () => {
    const { subject } = catalog({ search: false });

    expect(names(await subject.toolsFor(['web']))).toEqual(['web_extract']);
    expect(names(await subject.toolsFor(['agent-chat']))).not.toContain('web_search');
  });

  it('offers no job tool on a host that has none, and skips unknown toolsets', async () => {
    const subject = new DefaultToolCatalog([new StubTool('clarify')]);

    expect(names(await subject.toolsFor(['cronjob', 'clarify', 'teleport', 'terminal']))).toEqual(['clarify']);
  });

  it('refuses two tools of the same name', async () => {
    expect(() => new DefaultToolCatalog([new StubTool('clarify'), new StubTool('clarify')])).toThrow(/"clarify" is given twice/);
  });
});

describe('the tool catalogs of the composition', () => {
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'agent-catalog-'));
  });

  afterEach(() => rmSync(home, { recursive: true, force: true }));

  function container(): Container {
    const config = { providers: {}, fallback_providers: [], platforms: {}, search: { searxng_url: 'http://127.0.0.1:8888' } };
    const built = new Container({ defaultScope: 'Singleton' });
    built.bind(TOKENS.AgentPaths).toConstantValue(agentPathsFor(home));
    built.bind(TOKENS.Logger).toConstantValue(new RecordingLogger());
    built.bind(TOKENS.ProcessTreeKiller).toConstantValue(new PosixProcessTreeKiller());
    built.bind(CONFIG_TOKENS.AgentConfig).toConstantValue(config as unknown as AgentConfig);
    built.bind(TOKENS.CronSettings).toConstantValue({ timeZone: 'UTC' } as CronSettings);
    // The job use cases are not under test here: the job tool's port is a stand-in.
    built.bind(TOKENS.JobControl).toConstantValue({} as JobControl);
    built.load(toolCatalogsModule(built));
    return built;
  }

  it('loads no tool until a session asks for one', () => {
    const built = container();

    built.get(RUNTIME_TOKENS.ToolCatalog);

    expect(built.isBound(RUNTIME_TOKENS.Tool)).toBe(false);
  });

  it('gives chat sessions the real tools and the job tool', async () => {
    const built = container();

    const tools = await built.get(RUNTIME_TOKENS.ToolCatalog).toolsFor(['agent-chat']);

    expect(names(tools)).toEqual(['cronjob', 'terminal', 'web_search', 'web_extract', 'vision', 'clarify']);
    expect(tools[0]).toBeInstanceOf(CronJobTool);
  });

  it('gives job runs no job tool, even when their toolsets name it, and loads the tools once for both', async () => {
    const built = container();

    const jobRunTools = await built.get(RUNTIME_TOKENS.JobRunToolCatalog).toolsFor(['cronjob', 'agent-chat']);
    const sessionTools = await built.get(RUNTIME_TOKENS.ToolCatalog).toolsFor(['terminal']);

    expect(names(jobRunTools)).toEqual(['terminal', 'web_search', 'web_extract', 'vision', 'clarify']);
    expect(sessionTools[0]).toBe(jobRunTools[0]);
  });
});
