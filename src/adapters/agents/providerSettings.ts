import type { AgentConfig, ProviderConfig, ProviderType } from '../config/AgentConfig.js';

/**
 * Providers usable by name without a `providers` entry; an entry of the same name overrides them
 * setting by setting. Each LLM one brings a default model (docs/providers.md), the one a run gets
 * that names the provider and no model: `--provider openai` alone runs gpt-4o-mini.
 */
export const BUILT_IN_PROVIDERS: Readonly<Record<string, Readonly<ProviderConfig> & { type: ProviderType }>> = {
  openai: { type: 'openai', base_url: 'https://api.openai.com/v1', api_key_env: 'OPENAI_API_KEY', model: 'gpt-4o-mini' },
  anthropic: { type: 'anthropic', base_url: 'https://api.anthropic.com', api_key_env: 'ANTHROPIC_API_KEY', model: 'claude-sonnet-4-5' },
  openrouter: { type: 'openai', base_url: 'https://openrouter.ai/api/v1', api_key_env: 'OPENROUTER_API_KEY', model: 'openai/gpt-4o-mini' },
  ollama: {
    type: 'openai',
    base_url: 'http://localhost:11434/v1',
    api_key_env: 'OLLAMA_API_KEY',
    api_key_required: false,
    model: 'llama3.2',
  },
  command: { type: 'command' },
};

/** Where a provider of a type goes when its entry names no `base_url`. */
const DEFAULT_BASE_URLS: Readonly<Record<'openai' | 'anthropic', string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

/** The keys of a provider and where they came from. */
export interface ProviderKeys {
  values: string[];
  /** `providers.x.api_keys`, `X_API_KEYS` or the single key's variable, for messages. */
  source: string;
}

/** A provider that can run, with everything a run needs. */
export type ResolvedProvider =
  | { type: 'command'; provider: string; model: string | null; command: readonly string[] }
  | {
      type: 'openai' | 'anthropic';
      provider: string;
      model: string;
      baseUrl: string;
      /** Null when the provider needs no key and none is set. */
      keys: ProviderKeys | null;
      /** Where a key is set, for messages: `OPENAI_API_KEY (or OPENAI_API_KEYS for several keys) …`. */
      keyHelp: string;
      maxTokens: number | null;
      /** `providers.<name>.vision`: false for a model that takes no images; absent when not set. */
      vision?: boolean;
    };

export type ProviderResolution = { ready: true; resolved: ResolvedProvider } | { ready: false; problem: string };

export interface ProviderLookup {
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  /** config.yaml as shown to the user. */
  configFile: string;
}

/**
 * Resolves a provider name and a model name (null = the provider's default: `providers.<name>.model`,
 * else the built-in's)
 * to what a run needs, or to a one-sentence problem that says how to fix the configuration.
 * Reads the configuration and the environment only; spends nothing.
 *
 * `model.base_url` and `model.api_key_env` apply to the provider named in the `model` section.
 * Keys come from `providers.<name>.api_keys`, else `<NAME>_API_KEYS` (comma-separated), else
 * the single variable `api_key_env` (default `<NAME>_API_KEY`); NAME is the provider name in
 * upper case with other characters than letters and digits as `_`.
 */
export function resolveProvider(lookup: ProviderLookup, provider: string, requestedModel: string | null): ProviderResolution {
  const { config, configFile } = lookup;
  const entry = Object.hasOwn(config.providers, provider) ? config.providers[provider] : undefined;
  const builtIn = Object.hasOwn(BUILT_IN_PROVIDERS, provider) ? BUILT_IN_PROVIDERS[provider] : undefined;
  if (!entry && !builtIn) {
    return {
      ready: false,
      problem:
        `The provider "${provider}" is not defined; define it under providers.${provider} in ${configFile} ` +
        `(for example with "type: openai" and "base_url: http://localhost:8000/v1"), or use a built-in one: ` +
        `${Object.keys(BUILT_IN_PROVIDERS).join(', ')}.`,
    };
  }
  const type = entry?.type ?? builtIn?.type;
  if (!type) {
    return {
      ready: false,
      problem: `The provider "${provider}" has no type; add "type: openai" (or anthropic, or command) under providers.${provider} in ${configFile}.`,
    };
  }
  // An entry of another type than the built-in of its name replaces it instead of refining it.
  const inherited = builtIn && builtIn.type === type ? builtIn : {};
  const settings: ProviderConfig = { ...inherited, ...entry, type };
  const fromModelSection = config.model?.provider === provider ? config.model : undefined;
  const model = requestedModel ?? settings.model ?? null;

  if (type === 'command') {
    const command = entry ? entry.command : config.model?.command;
    if (!command) {
      return {
        ready: false,
        problem: entry
          ? `The provider "${provider}" has no command; add "command: [my-agent]" under providers.${provider} in ${configFile}.`
          : `The provider "command" needs the program to run; add "command: [my-agent]" under model in ${configFile}.`,
      };
    }
    return { ready: true, resolved: { type, provider, model, command } };
  }

  if (model === null) {
    return {
      ready: false,
      problem: fromModelSection
        ? `The provider "${provider}" needs a model name; add "name: <model>" under model in ${configFile}.`
        : `The provider "${provider}" needs a model name; give the job one with --model, or add "model: <model>" ` +
          `under providers.${provider} in ${configFile}.`,
    };
  }
  const baseUrl = (fromModelSection?.base_url ?? settings.base_url ?? DEFAULT_BASE_URLS[type]).replace(/\/+$/, '');
  const envName = provider.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  const keyVariable = fromModelSection?.api_key_env ?? settings.api_key_env ?? `${envName}_API_KEY`;
  const keyHelp =
    `${keyVariable} (or ${envName}_API_KEYS for several keys, comma-separated), ` +
    `or list keys under providers.${provider}.api_keys in ${configFile}`;
  const keys = keysOf(settings, provider, `${envName}_API_KEYS`, keyVariable, lookup.env);
  const keyRequired = settings.api_key_required ?? !isOnThisMachine(baseUrl);
  if (!keys && keyRequired) {
    return { ready: false, problem: `The provider "${provider}" has no API key; set ${keyHelp}.` };
  }
  return {
    ready: true,
    resolved: {
      type,
      provider,
      model,
      baseUrl,
      keys,
      keyHelp,
      maxTokens: settings.max_tokens ?? null,
      ...(settings.vision === undefined ? {} : { vision: settings.vision }),
    },
  };
}

function keysOf(
  settings: ProviderConfig,
  provider: string,
  poolVariable: string,
  keyVariable: string,
  env: NodeJS.ProcessEnv,
): ProviderKeys | null {
  const listed = (settings.api_keys ?? []).map((key) => key.trim()).filter((key) => key !== '');
  if (listed.length > 0) return { values: listed, source: `providers.${provider}.api_keys` };
  const pooled = (env[poolVariable] ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
  if (pooled.length > 0) return { values: pooled, source: poolVariable };
  const single = env[keyVariable]?.trim();
  return single ? { values: [single], source: keyVariable } : null;
}

/** Local servers (Ollama, vLLM, llama.cpp, LM Studio) usually take no key. */
function isOnThisMachine(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}
