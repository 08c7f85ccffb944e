/**
 * The gateway's launcher (docs/processes.md): a small resident process that starts children
 * for the gateway. Node starts a child by forking the whole process, at a cost that grows with
 * its memory: about 1 ms for a process this small, 3–4 ms for a gateway. Each child's stdin,
 * stdout and stderr are Unix sockets connected to the gateway, which talks to the child directly;
 * this process only starts children and says when they ended. It imports node's own modules
 * only (an entry of its own in dist/), and ends when the gateway does.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { streamHeader, type LaunchEvent, type LaunchRequest } from './launcherProtocol.js';

const tell = (event: LaunchEvent) => process.send?.(event);

async function launch(request: LaunchRequest): Promise<void> {
  const sockets: Array<Socket | 'ignore'> = await Promise.all(
    request.stdio.map((wanted, stream) =>
      wanted ? connected(request.socket, streamHeader(request.id, stream)) : Promise.resolve('ignore' as const),
    ),
  );
  const options: SpawnOptions = { cwd: request.cwd, env: request.env, stdio: sockets, detached: true };
  const child = spawn(request.program, request.args, options);
  // The child holds its own copies now; once it is gone, the gateway sees the streams end.
  for (const socket of sockets) if (socket !== 'ignore') socket.destroy();
  child.on('error', (error: NodeJS.ErrnoException) =>
    tell({
      type: 'error',
      id: request.id,
      error: { message: error.message, code: error.code, errno: error.errno, syscall: error.syscall, path: error.path },
    }),
  );
  if (child.pid !== undefined) tell({ type: 'spawned', id: request.id, pid: child.pid });
  child.on('exit', (code, signal) => tell({ type: 'exit', id: request.id, code, signal }));
}

/** A socket to the gateway, its header written and flushed before any child can write. */
function connected(path: string, header: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('error', reject);
    socket.once('connect', () => socket.write(header, () => resolve(socket)));
  });
}

process.on('message', (request: LaunchRequest) => {
  launch(request).catch((error: NodeJS.ErrnoException) =>
    tell({
      type: 'error',
      id: request.id,
      error: { message: error.message, code: error.code, errno: error.errno, syscall: error.syscall },
    }),
  );
});
// The gateway gone (its channel closed), nothing is left to do.
process.on('disconnect', () => process.exit(0));
