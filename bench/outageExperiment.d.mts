import type { spawn } from 'node:child_process';

/** What one case of the outage experiment measured (bench/outageExperiment.mjs). */
export interface OutageCaseResult {
  outageSeconds: number;
  leaseSeconds: number | null;
  sent: number;
  accepted: number;
  ranOnce: number;
  ranTwice: number;
  ranTwiceEvents: string[];
  maxRuns: number;
  lost: number;
  lostEvents: number[];
  stillWaiting: number;
  notAccepted: number;
  drainSeconds: number | null;
  /** From the return until every event sent before it (the backlog the outage held back) had run. */
  backlogSeconds: number | null;
  drainAfterLastAcceptSeconds: number | null;
  statuses: Record<string, number>;
  gatewaysAlive: boolean;
  logs: Record<string, string>;
  work: string;
}

export function runOutageCase(options: {
  serverUrl?: string;
  outageSeconds: number;
  leaseSeconds?: number | null;
  ratePerSecond?: number;
  runMs?: number;
  beforeSeconds?: number;
  afterSeconds?: number;
  spawn?: typeof spawn;
  log?: (line: string) => void;
  keepWork?: boolean;
}): Promise<OutageCaseResult>;
