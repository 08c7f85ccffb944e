import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Route = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A web server on 127.0.0.1 with a route per path, for tests of the web tools. Every request
 * is recorded; an unknown path is a 404. `close()` also ends responses that never finish.
 */
export class LocalWebServer {
  readonly requests: IncomingMessage[] = [];

  private constructor(
    private readonly server: Server,
    private readonly routes: Record<string, Route>,
  ) {}

  static async start(routes: Record<string, Route>): Promise<LocalWebServer> {
    const server = createServer();
    const web = new LocalWebServer(server, routes);
    server.on('request', (request, response) => {
      web.requests.push(request);
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      const route = web.routes[path];
      if (route) route(request, response);
      else response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return web;
  }

  url(path = '/'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A route that answers with this status, content type and body. */
export function answer(status: number, contentType: string | null, body: string | Buffer): Route {
  return (_request, response) => {
    response.writeHead(status, contentType === null ? {} : { 'content-type': contentType }).end(body);
  };
}
