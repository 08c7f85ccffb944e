import { EventEmitter } from 'node:events';
import { fork, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningChild } from './childProcesses.js';
import { STREAM_HEADER_BYTES, type LaunchEvent, type LaunchRequest } from './launcherProtocol.js';
import { childEnvironment, NO_CHILD_ENVIRONMENT_POLICY } from '../../domain/childEnvironment.js';

/**
 * stdout or stderr of a LaunchedChild: the socket's data, kept until someone listens (the child
 * may write before its start is told), and `destroy` to stop waiting for the rest.
 */
class ChildOutput extends EventEmitter {
  private kept: Buffer[] | null = [];

  constructor(private readonly socket: Socket) {
    super();
    socket.on('data', (chunk: Buffer) => (this.kept ? this.kept.push(chunk) : this.emit('data', chunk)));
    socket.on('error', () => undefined);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the listener type of EventEmitter itself
  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    super.on(event, listener);
    if (event === 'data' && this.kept) {
      const kept = this.kept;
      this.kept = null;
      for (const chunk of kept) this.emit('data', chunk);
    }
    return this;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A child started by the launcher: its streams are sockets to this process; its end is told by the launcher. */
class LaunchedChild extends EventEmitter implements RunningChild {
  pid: number | undefined = undefined;
  stdin: Socket | null = null;
  stdout: ChildOutput | null = null;
  stderr: ChildOutput | null = null;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private closed = false;
  private openStreams = 0;

  constructor(readonly wanted: readonly boolean[]) {
    super();
  }

  /** Whether every stream asked for has connected. */
  get connected(): boolean {
    return this.wanted.every((wanted, stream) => !wanted || [this.stdin, this.stdout, this.stderr][stream] !== null);
  }

  attach(stream: number, socket: Socket): void {
    if (stream === 0) {
      socket.on('error', () => undefined);
      this.stdin = socket;
      if (this.exited) socket.destroy();
    } else {
      this.openStreams += 1;
      socket.once('close', () => {
        this.openStreams -= 1;
        this.closeWhenDone();
      });
      if (stream === 1) this.stdout = new ChildOutput(socket);
      else this.stderr = new ChildOutput(socket);
    }
  }

  exit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exited = { code, signal };
    this.stdin?.destroy();
    this.emit('exit', code, signal);
    this.closeWhenDone();
  }

  private closeWhenDone(): void {
    if (this.closed || !this.exited || this.openStreams > 0) return;
    this.closed = true;
    this.emit('close', this.exited.code, this.exited.signal);
  }

  /**
   * The child may end before its start is told (the launcher's messages come in batches): a
   * listener for its end that comes later still hears it.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the listener type of EventEmitter itself
  override once(event: string | symbol, listener: (...args: any[]) => void): this {
    const ended = (event === 'exit' && this.exited) || (event === 'close' && this.closed) ? this.exited : null;
    if (ended) setImmediate(() => listener(ended.code, ended.signal));
    else super.once(event, listener);
    return this;
  }
}

/**
 * Starts children through the launcher (launcherMain.ts, built as dist/launcher.js): a small
 * resident process whose forks cost a third of the gateway's, its streams Unix sockets straight
 * to this process. `spawn` resolves once the child was started and its streams are connected,
 * or once it could not be started (an `error` event follows at once).
 */
export class LauncherSpawner {
  private readonly children = new Map<
    number,
    { child: LaunchedChild; started: boolean; exited: boolean; resolve: (child: LaunchedChild) => void }
  >();
  private nextId = 1;
  private ended = false;

  private constructor(
    private readonly launcher: ChildProcess,
    private readonly server: Server,
    private readonly directory: string,
    private readonly socketPath: string,
  ) {
    server.on('connection', (socket) => this.accept(socket));
    launcher.on('message', (event: LaunchEvent) => this.hear(event));
    launcher.once('exit', () => this.end());
    process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  }

  /**
   * The launcher started and listened to; null when it cannot be (no Unix socket where the
   * temporary directory is, the launcher not starting), and children are then forked here.
   * `launch`, when given, runs node for the launcher: setpriv and its arguments, then node's path,
   * so that it, and every child it starts, dies with this process.
   */
  static async start(script: string, launch: { program: string; args: readonly string[] } | null): Promise<LauncherSpawner | null> {
    const directory = mkdtempSync(join(tmpdir(), 'agent-launcher-'));
    const socketPath = join(directory, 'streams.sock');
    const server = createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => resolve());
      });
      server.unref();
      const launcher = fork(script, [], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        // Each child's environment comes with its request: the launcher itself holds no credential.
        env: childEnvironment(process.env, 'untrusted', NO_CHILD_ENVIRONMENT_POLICY),
        execArgv: ['--max-semi-space-size=1'],
        ...(launch ? { execPath: launch.program, execArgv: [...launch.args, '--max-semi-space-size=1'] } : {}),
      });
      await new Promise<void>((resolve, reject) => {
        launcher.once('spawn', resolve);
        launcher.once('error', reject);
      });
      launcher.unref();
      launcher.channel?.unref();
      return new LauncherSpawner(launcher, server, directory, socketPath);
    } catch {
      server.close();
      rmSync(directory, { recursive: true, force: true });
      return null;
    }
  }

  /** False once the launcher has ended (killed, say): children are then forked here again. */
  get alive(): boolean {
    return !this.ended;
  }

  /** The launcher ended: what it had not started yet could not be; what it had started died with it. */
  private end(): void {
    this.ended = true;
    this.server.close();
    for (const [id, entry] of this.children) {
      this.children.delete(id);
      if (entry.started) {
        if (!entry.exited) entry.child.exit(null, 'SIGKILL');
        // Streams that never came are none: the runner hears the end (a listener that comes late still does).
        entry.resolve(entry.child);
      } else {
        entry.resolve(entry.child);
        setImmediate(() =>
          entry.child.emit('error', Object.assign(new Error('the launcher ended before the program started'), { code: 'ECHILD' })),
        );
      }
    }
    rmSync(this.directory, { recursive: true, force: true });
  }

  spawn(program: string, args: readonly string[], options: SpawnOptions): Promise<RunningChild> {
    const id = this.nextId++;
    const stdio = Array.isArray(options.stdio) ? options.stdio : [];
    const wanted: [boolean, boolean, boolean] = [stdio[0] === 'pipe', stdio[1] === 'pipe', stdio[2] === 'pipe'];
    const child = new LaunchedChild(wanted);
    return new Promise((resolve) => {
      this.children.set(id, { child, started: false, exited: false, resolve });
      this.holdWhileBusy();
      const request: LaunchRequest = {
        id,
        program,
        args: [...args],
        cwd: options.cwd?.toString(),
        env: options.env ?? {},
        stdio: wanted,
        socket: this.socketPath,
      };
      this.launcher.send(request);
    });
  }

  private hear(event: LaunchEvent): void {
    const entry = this.children.get(event.id);
    if (!entry) return;
    switch (event.type) {
      case 'spawned':
        entry.child.pid = event.pid;
        entry.started = true;
        this.resolveWhenReady(event.id);
        return;
      case 'error':
        this.children.delete(event.id);
        this.holdWhileBusy();
        entry.resolve(entry.child);
        setImmediate(() => entry.child.emit('error', Object.assign(new Error(event.error.message), event.error)));
        return;
      case 'exit':
        entry.exited = true;
        entry.child.exit(event.code, event.signal ?? null);
        // Its streams may still be on their way: the entry stays until they are all here.
        this.resolveWhenReady(event.id);
    }
  }

  /** Hands the child over once it started and every stream it asked for connected; forgets it once it also ended. */
  private resolveWhenReady(id: number): void {
    const entry = this.children.get(id);
    if (!entry || !entry.started || !entry.child.connected) return;
    entry.resolve(entry.child);
    if (entry.exited) {
      this.children.delete(id);
      this.holdWhileBusy();
    }
  }

  /**
   * Keeps this process alive while a child it asked for is starting or running, as a child of its
   * own would (the channel is unreferenced otherwise, so that an idle launcher holds nobody): an
   * early await on a child, with nothing else to do yet, would let the process end in between.
   */
  private holdWhileBusy(): void {
    if (this.children.size > 0) this.launcher.channel?.ref();
    else this.launcher.channel?.unref();
  }

  /** A stream's socket: its header says whose and which; the rest is the child's. */
  private accept(socket: Socket): void {
    socket.on('error', () => undefined);
    const read = () => {
      const header = socket.read(STREAM_HEADER_BYTES) as Buffer | null;
      if (header === null) return void socket.once('readable', read);
      this.attachStream(Number(header.subarray(0, 12).toString('ascii')), Number(header.subarray(12, 13).toString('ascii')), socket);
      // Read past the header in paused mode: flowing again from here.
      socket.resume();
    };
    socket.once('readable', read);
  }

  private attachStream(id: number, stream: number, socket: Socket): void {
    const entry = this.children.get(id);
    if (!entry) return void socket.destroy();
    entry.child.attach(stream, socket);
    this.resolveWhenReady(id);
  }
}
