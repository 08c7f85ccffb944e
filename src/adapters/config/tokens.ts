import type { ServiceIdentifier } from 'inversify';
import type { AgentConfig } from './AgentConfig.js';

/**
 * Tokens for adapter-level values. The validated config file is the adapters' business: use
 * cases receive only what they need through ports (CronSettings, AgentRunner …).
 */
export const CONFIG_TOKENS = {
  AgentConfig: Symbol.for('agent.config.AgentConfig') as ServiceIdentifier<AgentConfig>,
  /** The environment provider keys are read from (`OPENAI_API_KEY`, `<NAME>_API_KEYS` …). */
  Environment: Symbol.for('agent.config.Environment') as ServiceIdentifier<NodeJS.ProcessEnv>,
} as const;
