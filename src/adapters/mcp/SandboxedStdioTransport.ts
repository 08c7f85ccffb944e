import { mkdir } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ProcessTreeKiller } from '../../application/ports/ProcessTreeKiller.js';
import type { Sandbox } from '../../application/ports/Sandbox.js';
import { childProcesses } from '../process/childProcesses.js';
import { newTreeMark, TREE_MARK_VARIABLE } from '../process/markedProcesses.js';
import { dyingWithThisProcess } from '../process/parentDeathSignal.js';

/** How much of the server's stderr is kept, for the sentence saying why it did not start. */
const KEPT_STDERR_CHARS = 2000;

/** Process groups of the servers still running, killed when this process exits. */
const runningGroups = new Set<number>();
let exitHookInstalled = false;

function killGroupsAtExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of runningGroups) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  });
}

export interface StdioServerLaunch {
  command: string;
  args: readonly string[];
  /** The whole environment of the server. */
  env: NodeJS.ProcessEnv;
  /** Where it starts. */
  cwd: string;
  /** The directory the sandbox lets it write. */
  workspace: string;
  /** Told the pid of the server once it runs (for tests that account for every process). */
  onStarted?: (pid: number) => void;
}

/**
 * The SDK's stdio transport, but with the server started the way this service starts every child
 * (docs/processes.md): in the sandbox, as the leader of its own process group, marked so that
 * its tree can be found, dying with this process. The server does not keep a command alive: it
 * is unreferenced, and killed when this process exits.
 */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcess | null = null;
  private readonly mark = newTreeMark();
  private readonly readBuffer = new ReadBuffer();
  private stderr = '';
  private closed = false;

  constructor(
    private readonly launch: StdioServerLaunch,
    private readonly sandbox: Sandbox,
    private readonly killer: ProcessTreeKiller,
  ) {}

  /** The end of what the server wrote on stderr, for messages. */
  stderrTail(): string {
    return this.stderr.trim();
  }

  async start(): Promise<void> {
    const { launch } = this;
    // The sandbox makes the workspace when it is missing; without one, it is made here.
    await mkdir(launch.workspace, { recursive: true, mode: 0o700 });
    const confined = await this.sandbox.confine({
      program: launch.command,
      args: launch.args,
      cwd: launch.cwd,
      workspace: launch.workspace,
      readable: [launch.cwd],
    });
    const [{ spawn }, wrapped] = await Promise.all([childProcesses(), dyingWithThisProcess(confined, launch.env, launch.cwd)]);
    const child = spawn(wrapped.program, [...wrapped.args], {
      cwd: launch.cwd,
      env: { ...launch.env, [TREE_MARK_VARIABLE]: this.mark },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      windowsHide: true,
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    if (child.pid !== undefined) {
      runningGroups.add(child.pid);
      killGroupsAtExit();
      launch.onStarted?.(child.pid);
    }
    child.on('error', (error) => this.onerror?.(error));
    child.once('close', () => this.ended());
    child.stdin?.on('error', (error) => this.onerror?.(error));
    child.stdout?.on('data', (chunk: Buffer) => {
      try {
        this.readBuffer.append(chunk);
      } catch (error) {
        this.onerror?.(error as Error);
        return;
      }
      this.readMessages();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-KEPT_STDERR_CHARS);
    });
    // A server waiting for requests does not keep a command from ending.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) return Promise.reject(new Error('the server is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Kills the server's whole tree and resolves once it is gone. */
  async close(): Promise<void> {
    const pid = this.child?.pid;
    if (pid !== undefined && !this.closed) await this.killer.killTree(pid, this.mark);
    this.ended();
  }

  private readMessages(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.child?.pid !== undefined) runningGroups.delete(this.child.pid);
    this.readBuffer.clear();
    this.onclose?.();
  }
}
