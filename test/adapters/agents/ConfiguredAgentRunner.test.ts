import 'reflect-metadata';
import { failureOf } from '../../support/agentRuns.js';
import { Container } from 'inversify';
import { ConfiguredAgentRunner } from '../../../src/adapters/agents/ConfiguredAgentRunner.js';
import { resolveProvider } from '../../../src/adapters/agents/providerSettings.js';
import type { AgentConfig } from '../../../src/adapters/config/AgentConfig.js';
import { CONFIG_TOKENS } from '../../../src/adapters/config/tokens.js';
import { agentPathsFor } from '../../../src/adapters/persistence/agentPaths.js';
import { PosixProcessTreeKiller } from '../../../src/adapters/process/PosixProcessTreeKiller.js';
import type { ToolCatalog } from '../../../src/application/agent/ports/ToolCatalog.js';
import { RUNTIME_TOKENS } from '../../../src/application/agent/ports/tokens.js';
import { AgentRunError, type AgentRunRequest } from '../../../src/application/ports/AgentRunner.js';
import { TOKENS } from '../../../src/application/ports/tokens.js';
import { cronRunToolsets } from '../../../src/domain/toolsets.js';
import { ManualTimer } from '../../support/fakes/ManualTimer.js';
import { RecordingLogger } from '../../support/fakes/RecordingLogger.js';
import { eventually } from '../../support/processLiveness.js';
import { FakeLlmServer, replies, unreachableBaseUrl } from '../../support/fakeLlmServer.js';
import { FixedToolCatalog, RecordingTool } from '../../support/scriptedTools.js';

const paths = agentPathsFor('/srv/agent-home');
const CONFIG_FILE = '/srv/agent-home/config.yaml';

function configWith(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    providers: {},
    fallback_providers: [],
    platforms: {},
    cron: { wrap_response: true, max_parallel_jobs: 4, output_retention: 50, bot_chat_delivery_timeout_seconds: 600 },
    gateway: { shutdown_grace_seconds: 30 },
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
  },
});

function runnerFor(
  config: AgentConfig,
  env: NodeJS.ProcessEnv = {},
  tools: ToolCatalog = new FixedToolCatalog([]),
  logger = new RecordingLogger(),
): ConfiguredAgentRunner {
  return new ConfiguredAgentRunner(config, paths, new PosixProcessTreeKiller(), tools, env, logger);
}

function request(selection: AgentRunRequest['selection'] = { provider: null, model: null }): AgentRunRequest {
  return {
    context: { system: [], skills: [], task: 'Hello.' },
    selection,
    toolsets: cronRunToolsets(),
    idleTimeoutMs: 10_000,
    unattended: true,
  };
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
      'No model is configured; add for example "model: {provider: openai, name: gpt-4o-mini}" or ' +
        `"model: {provider: command, command: [my-agent]}" to ${CONFIG_FILE}.`,
    );
  });

  it('says how to complete a model section without a provider', () => {
    expect(runnerFor(configWith({ model: { name: 'small' } })).problemWith({ provider: null, model: null })).toBe(
      `No model provider is configured; add "provider: <name>" under model in ${CONFIG_FILE} ` +
        '(openai, anthropic, openrouter, ollama, command, or a name under providers).',
    );
  });

  it('names the missing program of the command provider', () => {
    expect(runnerFor(configWith({ model: { provider: 'command' } })).problemWith({ provider: null, model: null })).toBe(
      `The provider "command" needs the program to run; add "command: [my-agent]" under model in ${CONFIG_FILE}.`,
    );
  });

  it('names an unknown provider, where to define it, and the built-in ones', () => {
    expect(runner.problemWith({ provider: 'mystery', model: null })).toBe(
      `The provider "mystery" is not defined; define it under providers.mystery in ${CONFIG_FILE} ` +
        '(for example with "type: openai" and "base_url: http://localhost:8000/v1"), or use a built-in one: ' +
        'openai, anthropic, openrouter, ollama, command.',
    );
  });

  it('does not take inherited object properties for providers', () => {
    expect(runner.problemWith({ provider: 'toString', model: null })).toContain('"toString" is not defined');
  });

  it('names a command provider without a command', () => {
    expect(runner.problemWith({ provider: 'empty', model: null })).toBe(
      `The provider "empty" has no command; add "command: [my-agent]" under providers.empty in ${CONFIG_FILE}.`,
    );
  });

  it('names the variable to set for a built-in LLM provider without a key', () => {
    const openai = runnerFor(configWith({ model: { provider: 'openai', name: 'gpt-4o-mini' } }));

    expect(openai.problemWith({ provider: null, model: null })).toBe(
      'The provider "openai" has no API key; set OPENAI_API_KEY (or OPENAI_API_KEYS for several keys, comma-separated), ' +
        `or list keys under providers.openai.api_keys in ${CONFIG_FILE}.`,
    );
  });

  it.each([
    ['the single variable', { OPENAI_API_KEY: 'sk-1' }, {}],
    ['the pool variable', { OPENAI_API_KEYS: 'sk-1, sk-2' }, {}],
    ['providers.<name>.api_keys', {}, { openai: { api_keys: ['sk-1'] } }],
  ])('accepts keys from %s', (_source, env, providers) => {
    const openai = runnerFor(configWith({ model: { provider: 'openai', name: 'gpt-4o-mini' }, providers }), env);

    expect(openai.problemWith({ provider: null, model: null })).toBeNull();
  });

  it("reads the key from model.api_key_env for the model section's provider, and names that variable", () => {
    const config = configWith({ model: { provider: 'anthropic', name: 'claude-x', api_key_env: 'WORK_CLAUDE_KEY' } });

    expect(runnerFor(config, { WORK_CLAUDE_KEY: 'k' }).problemWith({ provider: null, model: null })).toBeNull();
    expect(runnerFor(config, { ANTHROPIC_API_KEY: 'k' }).problemWith({ provider: null, model: null })).toContain(
      'has no API key; set WORK_CLAUDE_KEY (or ANTHROPIC_API_KEYS',
    );
  });

  it('asks for no key for ollama or a server on this machine, but does for one elsewhere unless told not to', () => {
    const config = configWith({
      model: { provider: 'ollama', name: 'llama3.2' },
      providers: {
        vllm: { type: 'openai', base_url: 'http://127.0.0.1:8000/v1', model: 'qwen' },
        'gpu-box': { type: 'openai', base_url: 'http://gpu-box:8000/v1', model: 'qwen' },
        'gpu-box-open': { type: 'openai', base_url: 'http://gpu-box:8000/v1', model: 'qwen', api_key_required: false },
      },
    });
    const runner = runnerFor(config);

    expect(runner.problemWith({ provider: null, model: null })).toBeNull();
    expect(runner.problemWith({ provider: 'vllm', model: null })).toBeNull();
    expect(runner.problemWith({ provider: 'gpu-box-open', model: null })).toBeNull();
    expect(runner.problemWith({ provider: 'gpu-box', model: null })).toContain('has no API key; set GPU_BOX_API_KEY (or GPU_BOX_API_KEYS');
  });

  it('asks a job that picks an LLM provider without a default model for one', () => {
    const config = configWith({ ...configured, providers: { vllm: { type: 'openai', base_url: 'http://127.0.0.1:8000/v1' } } });
    const runner = runnerFor(config);

    expect(runner.problemWith({ provider: 'vllm', model: null })).toBe(
      'The provider "vllm" needs a model name; give the job one with --model, or add "model: <model>" ' +
        `under providers.vllm in ${CONFIG_FILE}.`,
    );
    expect(runner.problemWith({ provider: 'vllm', model: 'qwen' })).toBeNull();
  });

  it.each([
    ['openai', 'gpt-4o-mini', { OPENAI_API_KEY: 'k' }],
    ['anthropic', 'claude-sonnet-4-5', { ANTHROPIC_API_KEY: 'k' }],
    ['openrouter', 'openai/gpt-4o-mini', { OPENROUTER_API_KEY: 'k' }],
    ['ollama', 'llama3.2', {}],
  ])('gives the built-in provider %s its documented default model, %s', (provider, model, env) => {
    const resolution = resolveProvider({ config: configured, env, configFile: CONFIG_FILE }, provider, null);

    expect(resolution).toMatchObject({ ready: true, resolved: { provider, model } });
    expect(runnerFor(configured, env).problemWith({ provider, model: null })).toBeNull();
    expect(resolveProvider({ config: configured, env, configFile: CONFIG_FILE }, provider, 'other-model')).toMatchObject({
      resolved: { model: 'other-model' },
    });
  });

  it("uses a provider's default model for a job that names only the provider", () => {
    const config = configWith({ ...configured, providers: { openrouter: { model: 'meta-llama/llama-3.1-8b-instruct' } } });

    expect(resolveProvider({ config, env: { OPENROUTER_API_KEY: 'k' }, configFile: CONFIG_FILE }, 'openrouter', null)).toMatchObject({
      resolved: { model: 'meta-llama/llama-3.1-8b-instruct' },
    });
    expect(runnerFor(config, { OPENROUTER_API_KEY: 'k' }).problemWith({ provider: 'openrouter', model: null })).toBeNull();
  });

  it('asks for model.name when the model section names an LLM provider without one and without a default', () => {
    const config = configWith({
      model: { provider: 'vllm' },
      providers: { vllm: { type: 'openai', base_url: 'http://127.0.0.1:8000/v1' } },
    });
    expect(runnerFor(config).problemWith({ provider: null, model: null })).toBe(
      `The provider "vllm" needs a model name; add "name: <model>" under model in ${CONFIG_FILE}.`,
    );
  });

  it("runs the model section's built-in provider on its default model when it names none", () => {
    expect(
      resolveProvider(
        { config: configWith({ model: { provider: 'openai' } }), env: { OPENAI_API_KEY: 'k' }, configFile: CONFIG_FILE },
        'openai',
        null,
      ),
    ).toMatchObject({ resolved: { model: 'gpt-4o-mini' } });
  });

  it('asks for the type of a provider entry that overrides no built-in', () => {
    expect(
      runnerFor(configWith({ providers: { mine: { base_url: 'http://x.example/v1' } } })).problemWith({ provider: 'mine', model: 'm' }),
    ).toBe(`The provider "mine" has no type; add "type: openai" (or anthropic, or command) under providers.mine in ${CONFIG_FILE}.`);
  });
});

describe('ConfiguredAgentRunner with command providers', () => {
  const runner = runnerFor(configured);

  it('runs the configured model command with the configured model name', async () => {
    const result = await runner.run(request());

    expect(result.text).toBe('model=small');
    expect(result.answeredBy).toMatch(/^command:node(\.exe)? \(small\)$/);
  });

  it('runs the command of a named provider with the job model override', async () => {
    const result = await runner.run(request({ provider: 'local', model: 'tiny' }));

    expect(result.text).toBe('local tiny');
    expect(result.answeredBy).toMatch(/^local:node(\.exe)? \(tiny\)$/);
  });

  it('refuses to run a selection that has a problem, with the same sentence', async () => {
    const refused = runner.run(request({ provider: 'openai', model: 'gpt-4o-mini' }));

    await expect(refused).rejects.toBeInstanceOf(AgentRunError);
    await expect(refused).rejects.toMatchObject({
      reason: 'failed',
      message: runner.problemWith({ provider: 'openai', model: 'gpt-4o-mini' }),
    });
  });

  it('can be resolved from a container that binds only the config, the paths and the tree killer', async () => {
    const container = new Container();
    container.bind(CONFIG_TOKENS.AgentConfig).toConstantValue(configured);
    container.bind(TOKENS.AgentPaths).toConstantValue(paths);
    container.bind(TOKENS.ProcessTreeKiller).toConstantValue(new PosixProcessTreeKiller());
    container.bind(TOKENS.AgentRunner).to(ConfiguredAgentRunner);

    const fromContainer = container.get(TOKENS.AgentRunner);

    expect((await fromContainer.run(request())).text).toBe('model=small');
  });
});

describe('ConfiguredAgentRunner with LLM providers', () => {
  let server: FakeLlmServer;

  beforeEach(async () => {
    server = await FakeLlmServer.start();
  });

  afterEach(() => server.close());

  it('runs a built-in provider whose base_url the config overrides, with its usual key variable', async () => {
    server.reply(replies.text('Hi from OpenAI.'));
    const config = configWith({
      model: { provider: 'openai', name: 'gpt-4o-mini' },
      providers: { openai: { base_url: server.openAiBaseUrl } },
    });

    const result = await runnerFor(config, { OPENAI_API_KEY: 'sk-openai' }).run(request());

    expect(result).toMatchObject({ text: 'Hi from OpenAI.', answeredBy: 'openai (gpt-4o-mini)' });
    expect(server.requests[0]).toMatchObject({ format: 'openai', apiKey: 'sk-openai', body: { model: 'gpt-4o-mini' } });
  });

  it("keeps a transcript of the run, scrubbed of the provider's key and of every credential of the environment", async () => {
    server.reply(replies.text('The key is sk-openai-secret and the bot token is tg-bot-secret.'));
    const config = configWith({
      model: { provider: 'openai', name: 'gpt-4o-mini' },
      providers: { openai: { base_url: server.openAiBaseUrl } },
    });

    const result = await runnerFor(config, { OPENAI_API_KEY: 'sk-openai-secret', TELEGRAM_BOT_TOKEN: 'tg-bot-secret' }).run(request());

    expect(result.transcript).toEqual([
      expect.objectContaining({
        type: 'model_turn',
        model: 'openai (gpt-4o-mini)',
        text: 'The key is [redacted OPENAI_API_KEY] and the bot token is [redacted TELEGRAM_BOT_TOKEN].',
      }),
    ]);
  });

  it('runs an anthropic provider through model.base_url', async () => {
    server.reply(replies.text('Hi from Claude.'));
    const config = configWith({ model: { provider: 'anthropic', name: 'claude-x', base_url: server.anthropicBaseUrl } });

    const result = await runnerFor(config, { ANTHROPIC_API_KEY: 'sk-ant' }).run(request());

    expect(result).toMatchObject({ text: 'Hi from Claude.', answeredBy: 'anthropic (claude-x)' });
    expect(server.requests[0]).toMatchObject({ format: 'anthropic', apiKey: 'sk-ant' });
  });

  it('offers the tools of the catalog and runs them', async () => {
    const search = new RecordingTool('web_search', () => 'sunny');
    server.reply(replies.toolCalls({ name: 'web_search', arguments: { query: 'weather' } }), replies.text('Sunny.'));
    const config = configWith({
      model: { provider: 'local', name: 'qwen' },
      providers: { local: { type: 'openai', base_url: server.openAiBaseUrl } },
    });

    const result = await runnerFor(config, {}, new FixedToolCatalog([search])).run(request());

    expect(result.text).toBe('Sunny.');
    expect(search.calls).toEqual([{ args: { query: 'weather' }, unattended: true, privateNetworks: true }]);
    expect(server.requests[0]!.apiKey).toBeNull();
  });

  it('rotates to the next key of <NAME>_API_KEYS on a 429 and keeps the resting key out of the next run', async () => {
    server.reply(replies.rateLimited('60'), replies.text('First.'), replies.text('Second.'));
    const config = configWith({
      model: { provider: 'cloud', name: 'm' },
      providers: { cloud: { type: 'openai', base_url: server.openAiBaseUrl } },
    });
    const logger = new RecordingLogger();
    const runner = runnerFor(config, { CLOUD_API_KEYS: 'sk-one,sk-two' }, new FixedToolCatalog([]), logger);

    expect((await runner.run(request())).text).toBe('First.');
    expect((await runner.run(request())).text).toBe('Second.');

    expect(server.requests.map((sent) => sent.apiKey)).toEqual(['sk-one', 'sk-two', 'sk-two']);
    expect(JSON.stringify(logger.entries)).toContain('key 1 of 2 from CLOUD_API_KEYS is rate-limited; it rests for 60 s');
    expect(JSON.stringify(logger.entries)).not.toContain('sk-one');
  });

  it('shares resting keys between the runner of job runs and the one with other tools', async () => {
    server.reply(replies.rateLimited('60'), replies.text('First.'), replies.text('Second.'));
    const config = configWith({
      model: { provider: 'cloud', name: 'm' },
      providers: { cloud: { type: 'openai', base_url: server.openAiBaseUrl } },
    });
    const jobRuns = runnerFor(config, { CLOUD_API_KEYS: 'sk-one,sk-two' }, new FixedToolCatalog([]));
    const search = new RecordingTool('web_search');
    const sessions = jobRuns.withTools(new FixedToolCatalog([search]));

    await jobRuns.run(request());
    await sessions.run({ ...request(), toolsets: ['web'] });

    expect(server.requests.map((sent) => sent.apiKey)).toEqual(['sk-one', 'sk-two', 'sk-two']);
    expect((server.requests[0]!.body.tools ?? []).length).toBe(0);
    expect(server.requests[2]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual(['web_search']);
  });

  it('holds every run of a provider, in both runners, until the Retry-After one of them got', async () => {
    server.reply(replies.rateLimited('7'), replies.text('First.'), replies.text('Second.'));
    const config = configWith({
      model: { provider: 'cloud', name: 'm' },
      providers: { cloud: { type: 'openai', base_url: server.openAiBaseUrl } },
    });
    const timer = new ManualTimer();
    const logger = new RecordingLogger();
    const jobRuns = new ConfiguredAgentRunner(
      config,
      paths,
      new PosixProcessTreeKiller(),
      new FixedToolCatalog([]),
      { CLOUD_API_KEY: 'sk-one' },
      logger,
      timer,
    );
    const sessions = jobRuns.withTools(new FixedToolCatalog([]));

    const first = jobRuns.run(request());
    expect(await eventually(() => logger.entries.some((entry) => entry.message.includes('Retry-After')))).toBe(true);
    const second = sessions.run(request());
    // Each run waits on the gate, and on its idle budget.
    expect(await eventually(() => timer.pending === 4)).toBe(true);
    expect(server.requests).toHaveLength(1);
    timer.advance(7_000 + 3_500);

    expect((await Promise.all([first, second])).map((result) => result.text).sort()).toEqual(['First.', 'Second.']);
    expect(server.requests).toHaveLength(3);
  });

  describe('falls back to the next provider', () => {
    function withFallback(primaryBaseUrl: string, fallbacks: Partial<AgentConfig> = {}): AgentConfig {
      return configWith({
        model: { provider: 'primary', name: 'big' },
        providers: {
          primary: { type: 'openai', base_url: primaryBaseUrl },
          backup: { type: 'anthropic', base_url: server.anthropicBaseUrl, model: 'small' },
        },
        fallback_providers: [{ provider: 'backup' }],
        ...fallbacks,
      });
    }

    const env = { PRIMARY_API_KEY: 'sk-primary', BACKUP_API_KEY: 'sk-backup' };

    it('on a 5xx, and the answer names the fallback', async () => {
      server.reply(replies.error(500, 'internal error'), replies.text('From the backup.'));

      const result = await runnerFor(withFallback(server.openAiBaseUrl), env).run(request());

      expect(result).toMatchObject({ text: 'From the backup.', answeredBy: 'backup (small)' });
      expect(server.requests.map((sent) => [sent.format, sent.apiKey])).toEqual([
        ['openai', 'sk-primary'],
        ['anthropic', 'sk-backup'],
      ]);
    });

    it('when the endpoint cannot be reached', async () => {
      server.reply(replies.text('From the backup.'));

      const result = await runnerFor(withFallback(await unreachableBaseUrl()), env).run(request());

      expect(result.answeredBy).toBe('backup (small)');
    });

    it('when every key of the provider is rate-limited for longer than a call waits', async () => {
      server.reply(replies.rateLimited('3600'), replies.text('From the backup.'));

      const result = await runnerFor(withFallback(server.openAiBaseUrl), env).run(request());

      expect(result.answeredBy).toBe('backup (small)');
    });

    it('named by the legacy fallback_model, with "name" for the model', async () => {
      server.reply(replies.error(503, 'overloaded'), replies.text('From the legacy backup.'));
      const config = withFallback(server.openAiBaseUrl, { fallback_providers: [], fallback_model: { provider: 'backup', name: 'tiny' } });

      const result = await runnerFor(config, env).run(request());

      expect(result.answeredBy).toBe('backup (tiny)');
    });

    it('but not when the key is refused', async () => {
      server.reply(replies.error(401, 'bad key'), replies.text('never'));

      const error = await failureOf(runnerFor(withFallback(server.openAiBaseUrl), env).run(request()));

      expect(error.message).toMatch(
        /^The provider primary \(big\) failed: .* refused the API key \(HTTP 401: bad key\); check the key from PRIMARY_API_KEY\.$/,
      );
      expect(server.requests).toHaveLength(1);
    });

    it('and names each provider tried, and each fallback left out, when all fail', async () => {
      const unreachable = await unreachableBaseUrl();
      server.reply(replies.error(502, 'bad gateway'));
      const config = withFallback(unreachable, { fallback_providers: [{ provider: 'backup' }, { provider: 'openrouter', model: 'x' }] });

      const error = await failureOf(runnerFor(config, env).run(request()));

      expect(error.message).toBe(
        `Every provider failed: primary (big): could not reach ${unreachable} (ECONNREFUSED); ` +
          `backup (small): ${server.anthropicBaseUrl} answered HTTP 502: bad gateway. ` +
          'Not tried: fallback "openrouter": The provider "openrouter" has no API key; set OPENROUTER_API_KEY ' +
          `(or OPENROUTER_API_KEYS for several keys, comma-separated), or list keys under providers.openrouter.api_keys in ${CONFIG_FILE}.`,
      );
    });
  });

  it("runs a job that picks another provider with that provider's default model", async () => {
    server.reply(replies.text('Picked.'));
    const config = configWith({
      ...configured,
      providers: { cheap: { type: 'openai', base_url: server.openAiBaseUrl, model: 'mini' } },
    });

    const result = await runnerFor(config).run(request({ provider: 'cheap', model: null }));

    expect(result.answeredBy).toBe('cheap (mini)');
  });

  it('can be resolved from a container that binds the tool catalog and the environment too', async () => {
    server.reply(replies.text('Wired.'));
    const container = new Container();
    container
      .bind(CONFIG_TOKENS.AgentConfig)
      .toConstantValue(configWith({ model: { provider: 'openai', name: 'gpt-4o-mini', base_url: server.openAiBaseUrl } }));
    container.bind(CONFIG_TOKENS.Environment).toConstantValue({ OPENAI_API_KEY: 'sk-wired' });
    container.bind(RUNTIME_TOKENS.JobRunToolCatalog).toConstantValue(new FixedToolCatalog([]));
    container.bind(TOKENS.AgentPaths).toConstantValue(paths);
    container.bind(TOKENS.ProcessTreeKiller).toConstantValue(new PosixProcessTreeKiller());
    container.bind(TOKENS.AgentRunner).to(ConfiguredAgentRunner);

    const result = await container.get(TOKENS.AgentRunner).run(request());

    expect(result.text).toBe('Wired.');
    expect(server.requests[0]!.apiKey).toBe('sk-wired');
  });
});

describe('ConfiguredAgentRunner.warmUp', () => {
  it('loads the model of the configured provider and of its fallbacks ahead of the first run, contacting nothing', async () => {
    const runner = runnerFor(
      configWith({
        model: { provider: 'vllm', name: 'qwen' },
        providers: { vllm: { type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key_required: false } },
        fallback_providers: [{ provider: 'anthropic', model: 'claude' }],
      }),
      { ANTHROPIC_API_KEY: 'sk-ant-test' },
    );
    await expect(runner.warmUp()).resolves.toBeUndefined();
    const state = (runner as unknown as { state: { chatModels: Map<string, Promise<unknown>> } }).state;
    expect([...state.chatModels.keys()].map((key) => key.split(' ')[0])).toEqual(['openai', 'anthropic']);
  });

  it('does nothing for a command provider or without a model, and never throws', async () => {
    await expect(runnerFor(configured).warmUp()).resolves.toBeUndefined();
    await expect(runnerFor(configWith()).warmUp()).resolves.toBeUndefined();
  });
});
