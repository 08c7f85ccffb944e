import type { SandboxMode } from '../../domain/sandboxPlan.js';

/** A child to confine: what it runs, where, and what it needs beyond the workspace. */
export interface SandboxRequest {
  program: string;
  args: readonly string[];
  /** Where it would start; the workspace instead when the sandbox hides this directory. */
  cwd?: string;
  /** The directory it may write (created when missing). */
  workspace: string;
  /** Paths it must read although they lie in a hidden place (a pre-run script's directory). */
  readable?: readonly string[];
}

/** What to spawn instead. */
export interface ConfinedLaunch {
  program: string;
  args: readonly string[];
}

/** Whether children run sandboxed, and why not when they do not although the mode asks for it. */
export interface SandboxStatus {
  mode: SandboxMode;
  /** bubblewrap is in use. */
  active: boolean;
  /** Why bubblewrap cannot be used here (one sentence), when the mode is not `off` and it is not active. */
  problem: string | null;
}

/** Thrown by `confine` when `tools.sandbox: bwrap` is set and bubblewrap does not work here. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

/**
 * Runs the children a job or a model can steer (pre-run scripts, the terminal tool, `command` agent
 * programs) where they cannot see the service's processes, home, configuration or secrets
 * (docs/processes.md). Implementations: BubblewrapSandbox, and NO_SANDBOX for callers that never confine.
 */
export interface Sandbox {
  /** Found out once; never rejects. */
  status(): Promise<SandboxStatus>;
  /** The launch that runs `request` confined, or as it is when no sandbox is in use; throws SandboxUnavailableError (see there). */
  confine(request: SandboxRequest): Promise<ConfinedLaunch>;
}

/** A sandbox that confines nothing: `tools.sandbox: off`, and tests that do not care. */
export const NO_SANDBOX: Sandbox = {
  status: async () => ({ mode: 'off', active: false, problem: null }),
  confine: async (request) => ({ program: request.program, args: request.args }),
};
