import { existsSync, realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { AgentPaths } from '../../application/ports/Settings.js';
import type { ToolsConfig } from '../config/AgentConfig.js';
import {
  SandboxUnavailableError,
  type ConfinedLaunch,
  type Sandbox,
  type SandboxRequest,
  type SandboxStatus,
} from '../../application/ports/Sandbox.js';
import { CappedOutput } from './CappedOutput.js';
import { located } from './parentDeathSignal.js';
import { ChildProcessRunner } from './ChildProcessRunner.js';
import { platformProcessTreeKiller } from './platformProcessTreeKiller.js';
import { bubblewrapArguments, visibleDirectory, type SandboxMode, type SandboxPlan } from '../../domain/sandboxPlan.js';

/** What `tools.*` says about the sandbox. */
export interface SandboxSettings {
  mode: SandboxMode;
  /** `tools.network`; default true. */
  network: boolean;
  /** `tools.sandbox_readable`: more paths children may read although they lie in a hidden place. */
  readable: readonly string[];
  /** `tools.sandbox_writable`: more paths children may write. */
  writable: readonly string[];
}

/** What the sandbox hides: the agent's home, its config file, the user's home, the temporary directory. */
export interface HiddenPlaces {
  agentHome: string;
  configFile: string;
  userHome?: string;
  temporaryDirectory?: string;
}

/** The sandbox that `tools.*` asks for, hiding this home and config file. */
export function configuredSandbox(tools: ToolsConfig | undefined, paths: Pick<AgentPaths, 'home' | 'configFile'>): BubblewrapSandbox {
  const settings: SandboxSettings = {
    mode: tools?.sandbox ?? 'auto',
    network: tools?.network ?? true,
    readable: tools?.sandbox_readable ?? [],
    writable: tools?.sandbox_writable ?? [],
  };
  return new BubblewrapSandbox(settings, { agentHome: paths.home, configFile: paths.configFile });
}

/** A probe that takes longer than this on a loaded machine is not taken as a failure of bubblewrap. */
const PROBE_TIMEOUT_MS = 20_000;

/**
 * Confines children with bubblewrap (`bwrap`, Debian's `bubblewrap`): the plan is
 * src/domain/sandboxPlan.ts, what a child sees is in docs/processes.md. Whether bwrap works is
 * found once, by running `true` in the same kind of sandbox: a container without user namespaces,
 * or a system without bwrap, fails there. With `auto` children then run unconfined (the gateway
 * warns at start, see sandboxFinding); with `bwrap` each child refuses to start instead, and the
 * gateway refuses to start at all.
 */
export class BubblewrapSandbox implements Sandbox {
  private found: Promise<SandboxStatus & { program: string | null }> | null = null;
  private hidden: Pick<SandboxPlan, 'hiddenDirectories' | 'sealedDirectories'> | null = null;

  constructor(
    private readonly settings: SandboxSettings,
    private readonly places: HiddenPlaces,
    private readonly environment: NodeJS.ProcessEnv = process.env,
  ) {}

  status(): Promise<SandboxStatus> {
    return this.probe().then(({ mode, active, problem }) => ({ mode, active, problem }));
  }

  async confine(request: SandboxRequest): Promise<ConfinedLaunch> {
    const status = await this.probe();
    if (!status.active || status.program === null) {
      const refusal = sandboxFinding(status);
      if (refusal?.refused) throw new SandboxUnavailableError(refusal.message);
      return { program: request.program, args: request.args };
    }
    await mkdir(request.workspace, { recursive: true });
    const plan = await this.planFor(request);
    return { program: status.program, args: [...bubblewrapArguments(plan), '--', request.program, ...request.args] };
  }

  private async planFor(request: SandboxRequest): Promise<SandboxPlan> {
    const { hiddenDirectories, sealedDirectories } = this.hiddenPlaces();
    const named = [request.program, ...request.args].filter((word) => isAbsolute(word) && existsSync(word));
    const program = await located(request.program, this.environment, request.cwd ?? process.cwd());
    // A path and, when it is a symbolic link, where it leads (a program linked from ~/.local/bin).
    const readable = [...named, ...(program ? [program] : []), ...(request.readable ?? []), ...this.settings.readable]
      .filter((path) => existsSync(path))
      .flatMap((path) => [...new Set([resolve(path), realpathSync(path)])]);
    const writable = [request.workspace, ...this.settings.writable.filter((path) => existsSync(path))].map((path) => resolve(path));
    const partial = { hiddenDirectories, sealedDirectories, readable, writable };
    const cwd = visibleDirectory(partial, resolve(request.cwd ?? process.cwd())) ?? resolve(request.workspace);
    return {
      ...partial,
      hiddenFiles: existsSync(this.places.configFile) ? [resolve(this.places.configFile)] : [],
      cwd,
      network: this.settings.network,
      dropCapabilities: process.getuid?.() === 0,
    };
  }

  /** The directories hidden from every child, looked up once: they are this process's home, temporary directory and agent home. */
  private hiddenPlaces(): Pick<SandboxPlan, 'hiddenDirectories' | 'sealedDirectories'> {
    const present = (dirs: string[]) => dirs.filter((dir) => dir && isAbsolute(dir) && existsSync(dir)).map((dir) => resolve(dir));
    this.hidden ??= {
      hiddenDirectories: present([this.places.userHome ?? homedir(), this.places.temporaryDirectory ?? tmpdir()]),
      sealedDirectories: present([this.places.agentHome]),
    };
    return this.hidden;
  }

  private probe(): Promise<SandboxStatus & { program: string | null }> {
    this.found ??= this.find();
    return this.found;
  }

  private async find(): Promise<SandboxStatus & { program: string | null }> {
    const mode = this.settings.mode;
    if (mode === 'off') return { mode, active: false, problem: null, program: null };
    if (process.platform !== 'linux') return { mode, active: false, problem: 'bubblewrap runs on Linux only.', program: null };
    const program = await located('bwrap', this.environment, process.cwd());
    if (program === null) {
      return { mode, active: false, problem: 'bubblewrap (bwrap) is not installed.', program: null };
    }
    const failure = await probeFailure(program);
    if (failure !== null) {
      return {
        mode,
        active: false,
        problem: `bubblewrap cannot make its sandbox here (${failure}); a container needs user namespaces for it.`,
        program: null,
      };
    }
    return { mode, active: true, problem: null, program };
  }
}

/** Runs `true` in a sandbox like the children's: null when that works, else what bwrap said. */
async function probeFailure(program: string): Promise<string | null> {
  const args = [
    ...bubblewrapArguments({
      hiddenDirectories: [],
      sealedDirectories: [],
      hiddenFiles: [],
      readable: [],
      writable: [],
      cwd: '/',
      network: true,
      dropCapabilities: process.getuid?.() === 0,
    }),
    '--',
    'true',
  ];
  const stderr = new CappedOutput(4096, 'start');
  const end = await new ChildProcessRunner(platformProcessTreeKiller()).run({
    program,
    args,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stderr,
    timeoutMs: PROBE_TIMEOUT_MS,
  });
  if (end.kind === 'exited' && end.code === 0) return null;
  if (end.kind === 'not_started') return end.error.message;
  if (end.kind === 'stopped') return `it did not answer within ${PROBE_TIMEOUT_MS / 1000} s`;
  return (
    stderr
      .text()
      .trim()
      .split('\n')[0]
      ?.replace(/^bwrap: /, '') || `it exited with code ${end.code}`
  );
}

/**
 * What start-up and `agent config check` say about the sandbox: null when it works or is off;
 * with `bwrap`, a refusal; with `auto`, a warning that children run unconfined.
 */
export function sandboxFinding(status: SandboxStatus): { refused: boolean; message: string } | null {
  if (status.problem === null || status.mode === 'off') return null;
  if (status.mode === 'bwrap') {
    return {
      refused: true,
      message: `tools.sandbox is bwrap, but ${uncapitalize(status.problem)} Install bubblewrap (the bubblewrap package), or set tools.sandbox to auto or off.`,
    };
  }
  return {
    refused: false,
    message: `tools.sandbox is auto, but ${uncapitalize(status.problem)} Pre-run scripts, terminal commands and command agent programs run without a sandbox.`,
  };
}

function uncapitalize(sentence: string): string {
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}
