import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { YamlConfigLoader } from '../../../src/adapters/config/YamlConfigLoader.js';
import { AppError } from '../../../src/domain/errors.js';

let home: string;
let configFile: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'agent-config-'));
  configFile = join(home, 'config.yaml');
});

afterEach(() => rmSync(home, { recursive: true, force: true }));

function loadYaml(yaml: string) {
  writeFileSync(configFile, yaml);
  return new YamlConfigLoader(configFile).load();
}

function errorFrom(yaml: string): AppError {
  try {
    loadYaml(yaml);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected the config to be refused');
}

const DEFAULT_CRON = {
  wrap_response: true,
  output_retention: 50,
  bot_chat_delivery_timeout_seconds: 600,
  one_shot_grace_seconds: 120,
  failure_alerts: 'first',
  pause_after_failures: 0,
  catch_up: 'once',
};

describe('YamlConfigLoader', () => {
  it('gives every default when the file does not exist', () => {
    const { config, warnings } = new YamlConfigLoader(configFile).load();

    expect(config).toEqual({
      providers: {},
      fallback_providers: [],
      cron: DEFAULT_CRON,
      gateway: { shutdown_grace_seconds: 30 },
      platforms: {},
    });
    expect(warnings).toEqual([]);
  });

  it('gives every default when a regular file stands where a directory of the path should be', () => {
    writeFileSync(join(home, 'plain-file'), '');

    const { config } = new YamlConfigLoader(join(home, 'plain-file', 'config.yaml')).load();

    expect(config.cron).toEqual(DEFAULT_CRON);
  });

  it('gives every default for an empty file or one with only comments', () => {
    expect(loadYaml('# nothing yet\n').config.cron).toEqual(DEFAULT_CRON);
  });

  it('reads a complete, valid file', () => {
    const { config, warnings } = loadYaml(`
timezone: Europe/Berlin
model:
  provider: command
  name: small
  command: ["my-agent", "--quiet"]
providers:
  local:
    type: command
    command: [local-agent]
  cloud:
    type: openai
    base_url: https://api.example.com/v1
    api_key_env: CLOUD_API_KEY
    api_keys: [a, b]
fallback_providers:
  - provider: local
    model: tiny
fallback_model: {provider: cloud, model: big}
cron:
  provider: managed
  wrap_response: false
  max_parallel_jobs: 2
  output_retention: 10
  script_timeout_seconds: 90
  bot_chat_delivery_timeout_seconds: 30
  managed:
    portal_url: https://portal.example.com
    callback_url: https://agent.example.com
    expected_audience: agent-1
    jwks_url: https://portal.example.com/.well-known/jwks.json
platforms:
  telegram: {token_env: TELEGRAM_TOKEN, anything: [1, 2]}
  webhook:
    enabled: true
    extra: {port: 9000, routes: {gh: {secret: s}}}
toolsets: [web, terminal]
memory: {enabled: true}
search: {provider: none}
`);

    expect(warnings).toEqual([]);
    expect(config.timezone).toBe('Europe/Berlin');
    expect(config.model).toEqual({ provider: 'command', name: 'small', command: ['my-agent', '--quiet'] });
    expect(config.providers.cloud).toEqual({
      type: 'openai',
      base_url: 'https://api.example.com/v1',
      api_key_env: 'CLOUD_API_KEY',
      api_keys: ['a', 'b'],
    });
    expect(config.fallback_providers).toEqual([{ provider: 'local', model: 'tiny' }]);
    expect(config.cron).toEqual({
      provider: 'managed',
      wrap_response: false,
      max_parallel_jobs: 2,
      output_retention: 10,
      script_timeout_seconds: 90,
      bot_chat_delivery_timeout_seconds: 30,
      one_shot_grace_seconds: 120,
      failure_alerts: 'first',
      pause_after_failures: 0,
      catch_up: 'once',
      managed: {
        portal_url: 'https://portal.example.com',
        callback_url: 'https://agent.example.com',
        expected_audience: 'agent-1',
        jwks_url: 'https://portal.example.com/.well-known/jwks.json',
      },
    });
    expect(config.platforms.telegram).toEqual({ token_env: 'TELEGRAM_TOKEN', anything: [1, 2] });
    expect(config.platforms.webhook).toEqual({ enabled: true, extra: { port: 9000, routes: { gh: { secret: 's' } } } });
  });

  it('reads the variables the terminal tool and scripts may see after all, and refuses what is not a list of names', () => {
    expect(loadYaml('tools:\n  terminal:\n    env_passthrough: [GH_TOKEN, DEPLOY_KEY]\n').config.tools).toEqual({
      terminal: { env_passthrough: ['GH_TOKEN', 'DEPLOY_KEY'] },
    });
    expect(errorFrom('tools:\n  terminal:\n    env_passthrough: GH_TOKEN\n').message).toContain(
      'tools.terminal.env_passthrough must be a list of environment variable names such as ["GH_TOKEN"] (got "GH_TOKEN").',
    );
  });

  it('reads the prices of models and the budget of runs, and refuses each wrong value in one sentence', () => {
    const loaded = loadYaml(
      [
        'models:',
        '  prices:',
        '    openai/gpt-4o-mini: {input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075}',
        '    openrouter/meta-llama/llama-3.1-8b: {input_per_mtok: 0.02, output_per_mtok: 0.05}',
        'agent:',
        '  budget: {max_turns: 10, max_tokens: 40000, max_cost: 0.5, max_cost_per_day: 5}',
        '',
      ].join('\n'),
    ).config;
    expect(loaded.models?.prices?.['openrouter/meta-llama/llama-3.1-8b']).toEqual({ input_per_mtok: 0.02, output_per_mtok: 0.05 });
    expect(loaded.agent?.budget).toEqual({ max_turns: 10, max_tokens: 40000, max_cost: 0.5, max_cost_per_day: 5 });

    expect(errorFrom('models:\n  prices:\n    gpt-4o: {input_per_mtok: 1, output_per_mtok: 2}\n').message).toContain(
      'must be named <provider>/<model>, such as "openai/gpt-4o-mini"',
    );
    expect(errorFrom('models:\n  prices:\n    openai/gpt-4o: {input_per_mtok: cheap, output_per_mtok: 2}\n').message).toContain(
      'models.prices.openai/gpt-4o.input_per_mtok must be an amount of US dollars, 0 or more, such as 2.5 (got "cheap").',
    );
    expect(errorFrom('agent:\n  budget:\n    max_turns: 0\n').message).toContain(
      'agent.budget.max_turns must be a whole number of 1 or more (got 0).',
    );
    expect(errorFrom('agent:\n  budget:\n    max_cost: -1\n').message).toContain(
      'agent.budget.max_cost must be a positive amount of US dollars such as 0.5 (got -1).',
    );
  });

  it('treats a key written without a value as absent', () => {
    const { config } = loadYaml('timezone:\ncron:\n  max_parallel_jobs:\n');

    expect(config.timezone).toBeUndefined();
    expect(config.cron.max_parallel_jobs).toBeUndefined();
  });

  it('reads the file once', () => {
    writeFileSync(configFile, 'cron: {max_parallel_jobs: 2}\n');
    const loader = new YamlConfigLoader(configFile);
    const first = loader.load();
    writeFileSync(configFile, 'cron: {max_parallel_jobs: 3}\n');

    expect(loader.load()).toBe(first);
  });

  describe('refuses a wrong value with one sentence naming the file, the key and what is expected', () => {
    it.each([
      ['cron: {max_parallel_jobs: four}', 'cron.max_parallel_jobs must be a whole number of 1 or more (got "four").'],
      ['cron: {max_parallel_jobs: 0}', 'cron.max_parallel_jobs must be a whole number of 1 or more (got 0).'],
      ['cron: {output_retention: 2.5}', 'cron.output_retention must be a whole number of 1 or more (got 2.5).'],
      ['cron: {wrap_response: "yes"}', 'cron.wrap_response must be true or false (got "yes").'],
      ['cron: {catch_up: always}', 'cron.catch_up must be once or skip (got "always").'],
      [
        'cron: {bot_chat_delivery_timeout_seconds: -1}',
        'cron.bot_chat_delivery_timeout_seconds must be a positive number of seconds (got -1).',
      ],
      ['cron: {managed: {jwks_url: "ftp://x"}}', 'cron.managed.jwks_url must be an http:// or https:// URL (got "ftp://x").'],
      ['cron: 5', 'cron must be a mapping of keys to values (got 5).'],
      [
        'model: {command: my-agent}',
        'model.command must be a list of strings, the program first, e.g. ["my-agent", "--quiet"] (got "my-agent").',
      ],
      ['providers: {x: {type: gemini}}', 'providers.x.type must be one of "command", "openai", "anthropic" (got "gemini").'],
      ['fallback_providers: [{model: m}]', 'fallback_providers[0].provider must be a non-empty string (got nothing).'],
      ['fallback_model: {model: m}', 'fallback_model.provider must be a non-empty string (got nothing).'],
      ['fallback_model: openrouter', 'fallback_model must be a mapping of keys to values (got "openrouter").'],
      ['providers: {x: {type: openai, max_tokens: 0}}', 'providers.x.max_tokens must be a whole number of 1 or more (got 0).'],
      ['providers: {x: {type: openai, api_key_required: no}}', 'providers.x.api_key_required must be true or false (got "no").'],
      ['platforms: {webhook: {enabled: "on"}}', 'platforms.webhook.enabled must be true or false (got "on").'],
      ['platforms: {webhook: {extra: [1]}}', 'platforms.webhook.extra must be a mapping of keys to values (got a list).'],
      ['platforms: {webhook: {extra: {host: "  "}}}', 'platforms.webhook.extra.host must be a host name or IP address (got "  ").'],
      [
        'platforms: {webhook: {extra: {port: eighty}}}',
        'platforms.webhook.extra.port must be a port number from 0 to 65535 (got "eighty").',
      ],
      ['platforms: {webhook: {extra: {port: 70000}}}', 'platforms.webhook.extra.port must be a port number from 0 to 65535 (got 70000).'],
      [
        'platforms: {webhook: {extra: {secret: 5}}}',
        'platforms.webhook.extra.secret must be a string or a list of strings (got a value not shown here).',
      ],
      ['platforms: {webhook: {extra: {rate_limit: 0}}}', 'platforms.webhook.extra.rate_limit must be a whole number of 1 or more (got 0).'],
      [
        'platforms: {webhook: {extra: {max_body_bytes: 1.5}}}',
        'platforms.webhook.extra.max_body_bytes must be a whole number of 1 or more (got 1.5).',
      ],
      [
        'platforms: {webhook: {extra: {max_concurrent_runs: 0}}}',
        'platforms.webhook.extra.max_concurrent_runs must be a whole number of 1 or more (got 0).',
      ],
      [
        'platforms: {webhook: {extra: {output_retention: 0}}}',
        'platforms.webhook.extra.output_retention must be a whole number of 1 or more (got 0).',
      ],
      [
        'platforms: {webhook: {extra: {output_retention: 2.5}}}',
        'platforms.webhook.extra.output_retention must be a whole number of 1 or more (got 2.5).',
      ],
      [
        'platforms: {webhook: {extra: {output_retention: ten}}}',
        'platforms.webhook.extra.output_retention must be a whole number of 1 or more (got "ten").',
      ],
      [
        'platforms: {webhook: {extra: {output_retention: -1}}}',
        'platforms.webhook.extra.output_retention must be a whole number of 1 or more (got -1).',
      ],
      [
        'platforms: {webhook: {extra: {routes: [gh]}}}',
        'platforms.webhook.extra.routes must be a mapping of route names to settings (got a list).',
      ],
      ['timezone: 3', 'timezone must be an IANA time zone name such as "Europe/Berlin" (got 3).'],
    ])('%s', (yaml, expected) => {
      const error = errorFrom(yaml);

      expect(error.code).toBe('CONFIG.INVALID');
      expect(error.message).toBe(`${configFile}: ${expected}`);
    });
  });

  it('does not repeat a value that may be a credential', () => {
    const error = errorFrom('providers: {x: {type: openai, api_keys: sk-very-secret}}');

    expect(error.message).toBe(`${configFile}: providers.x.api_keys must be a list of strings (got a value not shown here).`);
  });

  it.each([
    ['providers: {x: {type: openai, api_key_env: sk-proj-very-secret}}', 'providers.x.api_key_env'],
    ['model: {provider: openai, api_key_env: sk-proj-very-secret}', 'model.api_key_env'],
  ])('does not repeat a key written where the name of its variable belongs: %s', (yaml, key) => {
    const error = errorFrom(yaml);

    expect(error.message).toBe(
      `${configFile}: ${key} must be the name of an environment variable such as OPENAI_API_KEY, not the key itself ` +
        '(got a value not shown here).',
    );
  });

  it('reads LLM provider settings, an entry that overrides a built-in without a type, and the legacy fallback', () => {
    const { config, warnings } = loadYaml(`
model: {provider: openrouter, name: meta-llama/llama-3.1-8b-instruct}
providers:
  openrouter: {api_key_env: MY_OPENROUTER_KEY}
  vllm: {type: openai, base_url: "http://gpu-box:8000/v1", api_key_required: false, model: qwen, max_tokens: 2048}
fallback_model: {provider: ollama, name: llama3.2}
`);

    expect(warnings).toEqual([]);
    expect(config.providers).toEqual({
      openrouter: { api_key_env: 'MY_OPENROUTER_KEY' },
      vllm: { type: 'openai', base_url: 'http://gpu-box:8000/v1', api_key_required: false, model: 'qwen', max_tokens: 2048 },
    });
    expect(config.fallback_model).toEqual({ provider: 'ollama', name: 'llama3.2' });
  });

  it('refuses a file that is not a mapping', () => {
    expect(errorFrom('- a\n- b\n').message).toBe(
      `${configFile} must hold a mapping of settings such as "cron:" and "model:" (got a list).`,
    );
  });

  it('names the file, line and column of a YAML syntax error', () => {
    const error = errorFrom('cron:\n  max_parallel_jobs: 2\n  max_parallel_jobs: 3\n');

    expect(error.code).toBe('CONFIG.INVALID');
    expect(error.message).toBe(`${configFile}: invalid YAML at line 3, column 3: duplicated mapping key.`);
  });

  it('warns about unknown keys at any depth, with the key probably meant, and ignores them', () => {
    const { config, warnings } = loadYaml(`
cron:
  wrap_respons: false
  managed: {portal: https://x.example}
modle: {provider: command}
providers: {local: {type: command, comand: [x]}}
`);

    expect(warnings).toEqual(
      [
        `${configFile}: unknown key "cron.managed.portal" (did you mean "portal_url"?) ignored`,
        `${configFile}: unknown key "cron.wrap_respons" (did you mean "wrap_response"?) ignored`,
        `${configFile}: unknown key "modle" (did you mean "model"?) ignored`,
        `${configFile}: unknown key "providers.local.comand" (did you mean "command"?) ignored`,
      ].sort(),
    );
    expect(config.cron.wrap_response).toBe(true);
    expect(config).not.toHaveProperty('modle');
    expect(config.providers.local).toEqual({ type: 'command' });
  });

  it('reads platforms.webhook.extra trimmed, and warns about a key the listener does not know', () => {
    const { config, warnings } = loadYaml('platforms: {webhook: {extra: {host: " 127.0.0.1 ", prot: 9000, metrics_token: " t "}}}\n');

    expect(warnings).toEqual([`${configFile}: unknown key "platforms.webhook.extra.prot" (did you mean "port"?) ignored`]);
    expect(config.platforms.webhook?.extra).toEqual({ host: '127.0.0.1', metrics_token: 't' });
  });

  describe('route names (the keys of platforms.webhook.extra.routes)', () => {
    const RULE = 'use 1 to 64 letters, digits, "-" and "_", starting with a letter or digit';
    const routes = (...names: string[]) =>
      `platforms:\n  webhook:\n    extra:\n      secret: s\n      routes:\n${names.map((name) => `        ${JSON.stringify(name)}: {prompt: hi}\n`).join('')}`;

    it.each([
      ['a parent directory', '..'],
      ['a slash', 'a/b'],
      ['65 characters', 'r'.repeat(65)],
      ['a dot', 'my.route'],
    ])('refuses %s with one sentence naming the route, in full, and the rule', (_case, name) => {
      const error = errorFrom(routes('github', name));

      expect(error.code).toBe('CONFIG.INVALID');
      expect(error.message).toBe(
        `${configFile}: platforms.webhook.extra.routes has the key ${JSON.stringify(name)}, which is not a usable route name: ${RULE}.`,
      );
    });

    it('accepts 64 characters and upper case, "-" and "_"', () => {
      const long = 'r'.repeat(64);

      const { config } = loadYaml(routes(long, 'Deploy_Hook-2'));

      expect(Object.keys(config.platforms.webhook?.extra?.routes ?? {})).toEqual([long, 'Deploy_Hook-2']);
    });

    it('are reported by diagnose as problems of the routes mapping, one per bad name', () => {
      writeFileSync(configFile, routes('..', 'ok', 'a/b'));

      const { config, problems } = new YamlConfigLoader(configFile).diagnose();

      expect(config).toBeNull();
      expect(problems.map((problem) => [problem.key, problem.message])).toEqual([
        [
          'platforms.webhook.extra.routes',
          `${configFile}: platforms.webhook.extra.routes has the key "..", which is not a usable route name: ${RULE}.`,
        ],
        [
          'platforms.webhook.extra.routes',
          `${configFile}: platforms.webhook.extra.routes has the key "a/b", which is not a usable route name: ${RULE}.`,
        ],
      ]);
    });
  });

  describe("the configured plugin provider's own section (cron.<provider>)", () => {
    it('keeps cron.<provider> as it is, nested values included, without a warning', () => {
      const { config, warnings } = loadYaml(`
cron:
  provider: my-scheduler
  my-scheduler:
    endpoint: https://scheduler.example
    retries: 3
    zones: {eu: true}
`);

      expect(warnings).toEqual([]);
      expect((config.cron as unknown as Record<string, unknown>)['my-scheduler']).toEqual({
        endpoint: 'https://scheduler.example',
        retries: 3,
        zones: { eu: true },
      });
    });

    it('still warns about a misspelt scalar key named like the provider, and about other unknown sections', () => {
      const { config, warnings } = loadYaml(`
cron:
  provider: my-scheduler
  my-scheduler: 3
  other-scheduler: {endpoint: https://other.example}
`);

      expect(warnings).toEqual([
        `${configFile}: unknown key "cron.my-scheduler" ignored`,
        `${configFile}: unknown key "cron.other-scheduler" ignored`,
      ]);
      expect(config.cron).not.toHaveProperty('my-scheduler');
      expect(config.cron).not.toHaveProperty('other-scheduler');
    });

    it('validates cron.managed as before when the provider is managed', () => {
      expect(errorFrom('cron: {provider: managed, managed: {portal_url: not-a-url}}').message).toContain('cron.managed.portal_url');
    });
  });

  describe('diagnose, for agent config check', () => {
    function diagnose(yaml: string) {
      writeFileSync(configFile, yaml);
      return new YamlConfigLoader(configFile).diagnose();
    }

    it('reports a misspelt key with the file, the key and the key probably meant, and still gives the config', () => {
      const { config, problems } = diagnose('timezon: Europe/Berlin\n');

      expect(problems).toEqual([
        {
          file: configFile,
          key: 'timezon',
          message: `${configFile}: unknown key "timezon" (did you mean "timezone"?); remove it or correct its spelling.`,
          stops: false,
        },
      ]);
      expect(config?.timezone).toBeUndefined();
    });

    it('reports every wrong value and unknown key at once, and no config', () => {
      const { config, problems } = diagnose('cron: {max_parallel_jobs: four, output_retention: 0}\ngateway: {shutdown_grace: 3}\n');

      expect(problems.map((problem) => problem.key)).toEqual(['cron.max_parallel_jobs', 'cron.output_retention', 'gateway.shutdown_grace']);
      expect(problems[0]!.message).toBe(`${configFile}: cron.max_parallel_jobs must be a whole number of 1 or more (got "four").`);
      expect(problems[2]!.message).toContain('did you mean "shutdown_grace_seconds"?');
      expect(config).toBeNull();
    });

    it('names keys inside named providers and list items by their path', () => {
      const { problems } = diagnose(
        'providers: {local: {type: command, comand: [x]}}\nfallback_providers: [{provider: local, modle: x}]\n',
      );

      expect(problems.map((problem) => problem.message)).toEqual([
        `${configFile}: unknown key "fallback_providers[0].modle" (did you mean "model"?); remove it or correct its spelling.`,
        `${configFile}: unknown key "providers.local.comand" (did you mean "command"?); remove it or correct its spelling.`,
      ]);
    });

    it('reports invalid YAML as one problem of the whole file', () => {
      const { config, problems } = diagnose('cron: [\n');

      expect(config).toBeNull();
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ file: configFile, key: '' });
      expect(problems[0]!.message).toContain('invalid YAML');
    });

    it('finds nothing wrong in a good file, or in none', () => {
      expect(diagnose('timezone: UTC\nmodel: {provider: command, command: [x]}\n').problems).toEqual([]);
      expect(new YamlConfigLoader(join(home, 'absent.yaml')).diagnose()).toMatchObject({ problems: [], config: { providers: {} } });
    });
  });

  it('refuses a wrong value even when unknown keys are present too', () => {
    expect(errorFrom('typo: 1\ncron: {max_parallel_jobs: four}').message).toContain('cron.max_parallel_jobs');
  });

  it('drops an invalid cron.script_timeout_seconds with a warning instead of refusing the file', () => {
    const { config, warnings } = loadYaml('cron: {script_timeout_seconds: soon}');

    expect(config.cron.script_timeout_seconds).toBeUndefined();
    expect(warnings).toEqual([
      `${configFile}: cron.script_timeout_seconds must be a positive number of seconds (got "soon"); it is ignored and the next source is used.`,
    ]);
  });

  it('reports a config path that cannot be read', () => {
    mkdirSync(configFile);

    expect(() => new YamlConfigLoader(configFile).load()).toThrow(
      expect.objectContaining({ code: 'CONFIG.UNREADABLE', message: expect.stringContaining(configFile) }),
    );
  });
});
