import { once } from 'node:events';
import { createServer } from 'node:net';

/** A port on 127.0.0.1 that nothing listened on a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
