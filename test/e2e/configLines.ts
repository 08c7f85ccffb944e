import type { FakeLlmServer } from '../support/fakeLlmServer.js';

/**
 * config.yaml lines the end-to-end tests share, so that each test writes only what it is about.
 * Join them with '\n' (with other lines before or after).
 */

/**
 * `tools.sandbox: off`: the stand-in models and the commands of these tests record what they did,
 * and their pids, in the home, which the sandbox hides and renumbers; test/e2e/sandbox.test.ts
 * runs with it. commandModelLines and localModelLines include it.
 */
export const NO_SANDBOX_LINES: readonly string[] = ['tools:', '  sandbox: off'];

/** `model:` for a `command` model: `command` is the program and its arguments (and no sandbox). */
export function commandModelLines(command: readonly string[], { sandbox = false } = {}): string[] {
  return ['model:', '  provider: command', `  command: ${JSON.stringify(command)}`, ...(sandbox ? [] : NO_SANDBOX_LINES)];
}

/** `model:` and `providers:` for a model `test-model` of a provider `local` on `llm`, its key in TEST_LLM_KEY (and no sandbox). */
export function localModelLines(llm: FakeLlmServer, type: 'openai' | 'anthropic' = 'openai', { sandbox = false } = {}): string[] {
  return [
    'model:',
    '  provider: local',
    '  name: test-model',
    'providers:',
    '  local:',
    `    type: ${type}`,
    `    base_url: ${type === 'openai' ? llm.openAiBaseUrl : llm.anthropicBaseUrl}`,
    '    api_key_env: TEST_LLM_KEY',
    ...(sandbox ? [] : NO_SANDBOX_LINES),
  ];
}

/**
 * `platforms:` with the webhook listener on, on 127.0.0.1:`port` with the global `secret`, up to
 * `routes:`; the routes follow, indented by 8 spaces.
 */
export function webhookListenerLines(port: number, secret: string): string[] {
  return [
    'platforms:',
    '  webhook:',
    '    enabled: true',
    '    extra:',
    '      host: 127.0.0.1',
    `      port: ${port}`,
    `      secret: ${secret}`,
    '      routes:',
  ];
}
