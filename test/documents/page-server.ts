import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export type PageHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A loopback web server for URL sources; `routes` may be changed while it runs. */
export async function startPageServer(
  t: Test,
  routes: Record<string, PageHandler>,
): Promise<{ url: string; port: number; hits: Record<string, number> }> {
  const hits: Record<string, number> = {};
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits[path] = (hits[path] ?? 0) + 1;
    const handler = routes[path];
    if (!handler) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      return;
    }
    handler(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, hits };
}
