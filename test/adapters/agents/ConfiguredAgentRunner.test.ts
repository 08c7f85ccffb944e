import 'reflect-metadata';
import { Container } from 'inversify';
import { ConfiguredAgentRunner } from '../../../src/adapters/agents/ConfiguredAgentRunner.js';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../../src/adapters/config/tokens.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { ProcessGroupKiller } from '../../../src/adapters/process/ProcessTreeKiller.js';
import { AgentRunError, type AgentRunRequest } from '../../../src/application/ports/AgentRunner.js';
import { TOKENS } from '../../../src/application/ports/tokens.js';

const paths = agentPathsFor('/srv/agent-home');
const CONFIG_FILE = '/srv/agent-home/config.yaml';

function configWith(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    providers: {},
    fallback_providers: [],
    platforms: {},
    cron: { wrap_response: true, max_parallel_jobs: 4, output_retention: 50, bot_chat_delivery_timeout_seconds: 600 },
    ...overrides,
  };
}

/** Prints which model it was given, so a test sees what the runner resolved. */
const ECHO_MODEL = [process.execPath, '-e', "console.log('model=' + (process.env.AGENT_MODEL ?? 'none'))"];

const configured = configWith({
  model: { provider: 'command', name: 'small', command: ECHO_MODEL },
  providers: {
    local: { type: 'command', command: [process.execPath, '-e', "console.log('local ' + process.env.AGENT_MODEL)"] },
    empty: { type: 'command' },
    cloud: { type: 'openai', base_url: 'https://api.example.com' },
    claude: { type: 'anthropic' },
  },
});

function runnerFor(config: AgentConfig): ConfiguredAgentRunner {
  return new ConfiguredAgentRunner(config, paths, new ProcessGroupKiller());
}

function request(selection: AgentRunRequest['selection']): AgentRunRequest {
  return { context: { system: [], skills: [], task: 'Hello.' }, selection, toolsets: [], idleTimeoutMs: 10_000, unattended: true };
}

describe('ConfiguredAgentRunner.problemWith', () => {
  const runner = runnerFor(configured);

  it('accepts the configured default model', () => {
    expect(runner.problemWith({ provider: null, model: null })).toBeNull();
  });

  it('accepts a job that names a provider of type command', () => {
    expect(runner.problemWith({ provider: 'local', model: 'tiny' })).toBeNull();
  });

  it('says how to configure a model when none is', () => {
    expect(runnerFor(configWith()).problemWith({ provider: null, model: null })).toBe(
      `No model is configured; add "model: {provider: command, command: [my-agent]}" to ${CONFIG_FILE}.`,
    );
  });

  it('says how to complete a model section without a provider', () => {
    expect(runnerFor(configWith({ model: { name: 'small' } })).problemWith({ provider: null, model: null })).toBe(
      `No model provider is configured; add "provider: command" and "command: [my-agent]" under model in ${CONFIG_FILE}.`,
    );
  });

  it('names the missing program of the command provider', () => {
    expect(runnerFor(configWith({ model: { provider: 'command' } })).problemWith({ provider: null, model: null })).toBe(
      `The provider "command" needs the program to run; add "command: [my-agent]" under model in ${CONFIG_FILE}.`,
    );
  });

  it('names an unknown provider and where to define it', () => {
    expect(runner.problemWith({ provider: 'mystery', model: null })).toBe(
      `The provider "mystery" is not defined; define it under providers.mystery in ${CONFIG_FILE} ` +
        '(for example with "type: command" and "command: [my-agent]").',
    );
  });

  it('does not take inherited object properties for providers', () => {
    expect(runner.problemWith({ provider: 'toString', model: null })).toContain('"toString" is not defined');
  });

  it.each([
    ['cloud', 'openai'],
    ['claude', 'anthropic'],
  ])('says the %s provider (type %s) is not available in this version', (provider, type) => {
    expect(runner.problemWith({ provider, model: null })).toBe(
      `The provider "${provider}" has type "${type}", which arrives with the LLM runtime and is not available in this ` +
        `version; use a provider of type "command" in ${CONFIG_FILE}.`,
    );
  });

  it('names a command provider without a command', () => {
    expect(runner.problemWith({ provider: 'empty', model: null })).toBe(
      `The provider "empty" has no command; add "command: [my-agent]" under providers.empty in ${CONFIG_FILE}.`,
    );
  });
});

describe('ConfiguredAgentRunner.run', () => {
  const runner = runnerFor(configured);

  it('runs the configured model command with the configured model name', async () => {
    const result = await runner.run(request({ provider: null, model: null }));

    expect(result.text).toBe('model=small');
    expect(result.answeredBy).toMatch(/^command:node(\.exe)? \(small\)$/);
  });

  it('runs the command of a named provider with the job model override', async () => {
    const result = await runner.run(request({ provider: 'local', model: 'tiny' }));

    expect(result.text).toBe('local tiny');
    expect(result.answeredBy).toMatch(/^local:node(\.exe)? \(tiny\)$/);
  });

  it('refuses to run a selection that has a problem, with the same sentence', async () => {
    const refused = runner.run(request({ provider: 'cloud', model: null }));

    await expect(refused).rejects.toBeInstanceOf(AgentRunError);
    await expect(refused).rejects.toMatchObject({ reason: 'failed', message: runner.problemWith({ provider: 'cloud', model: null }) });
  });

  it('can be resolved from a container that binds only the config and the paths', async () => {
    const container = new Container();
    container.bind(CONFIG_TOKENS.AgentConfig).toConstantValue(configured);
    container.bind(TOKENS.AgentPaths).toConstantValue(paths);
    container.bind(TOKENS.AgentRunner).to(ConfiguredAgentRunner);

    const fromContainer = container.get(TOKENS.AgentRunner);

    expect((await fromContainer.run(request({ provider: null, model: null }))).text).toBe('model=small');
  });
});
