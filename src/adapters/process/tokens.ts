import type { ServiceIdentifier } from 'inversify';
import type { ProcessTreeKiller } from './ProcessTreeKiller.js';

/** Tokens for process-level helpers that several adapters share. */
export const PROCESS_TOKENS = {
  ProcessTreeKiller: Symbol.for('agent.process.ProcessTreeKiller') as ServiceIdentifier<ProcessTreeKiller>,
} as const;
