import { DEFAULT_RUN_RETENTION, type RunRetention } from '../../domain/runs/RunRecord.js';
import type { AgentConfig } from './AgentConfig.js';

/** How long the run ledger keeps runs: `runs.retention_count` per job or route (200) and `runs.retention_days` (30). */
export function runRetention(config: Pick<AgentConfig, 'runs'> | null): RunRetention {
  return {
    count: config?.runs?.retention_count ?? DEFAULT_RUN_RETENTION.count,
    days: config?.runs?.retention_days ?? DEFAULT_RUN_RETENTION.days,
  };
}
