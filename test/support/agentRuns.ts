import { AgentRunError, type AgentRunRequest } from '../../src/application/ports/AgentRunner.js';
import type { RunContext } from '../../src/domain/RunContext.js';
import { cronRunToolsets } from '../../src/domain/toolsets.js';

/** Memory, two skills and a task: enough to see the order an agent receives them in. */
export const SAMPLE_CONTEXT: RunContext = {
  system: [
    { name: 'MEMORY.md', content: 'The user likes short answers.\n' },
    { name: 'USER.md', content: 'Name: Ada' },
  ],
  skills: [
    { name: 'weather', content: 'Look at the sky.' },
    { name: 'news', content: 'Read the paper.' },
  ],
  task: 'Report the weather.',
};

/** An unattended cron-style run request with SAMPLE_CONTEXT; `overrides` replace fields. */
export function sampleRunRequest(overrides: Partial<AgentRunRequest> = {}): AgentRunRequest {
  return {
    context: SAMPLE_CONTEXT,
    selection: { provider: null, model: null },
    toolsets: cronRunToolsets(),
    idleTimeoutMs: 10_000,
    unattended: true,
    ...overrides,
  };
}

/** The AgentRunError a run failed with; fails the test when it succeeded or failed otherwise. */
export async function failureOf(promise: Promise<unknown>): Promise<AgentRunError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgentRunError) return error;
    throw error;
  }
  throw new Error('expected the run to fail');
}
