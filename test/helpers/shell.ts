import type { Test } from 'tap';
import { z } from 'zod';
import {
  createHttpServer,
  defineRoute,
  reply,
  type AnyRoute,
  type AnySocketRoute,
  type Authenticator,
  type HttpServer,
  type RequestContext,
  type StreamSink,
} from '../../src/http/index.js';
import { captureLogger } from './log.js';

/** Starts the bare uWS shell with the given routes on 127.0.0.1:0, closed at teardown. */
export async function startShell(
  t: Test,
  options: {
    routes: AnyRoute[];
    sockets?: AnySocketRoute[];
    authenticators?: Record<string, Authenticator>;
    bodyLimitBytes?: number;
  },
): Promise<{ url: string; port: number; server: HttpServer; logs: ReturnType<typeof captureLogger> }> {
  const logs = captureLogger();
  const server = createHttpServer({
    log: logs.log,
    routes: options.routes,
    sockets: options.sockets ?? [],
    authenticators: options.authenticators ?? {},
    bodyLimitBytes: options.bodyLimitBytes ?? 1024,
    trustProxy: false,
    validateResponses: true,
  });
  const port = await server.listen('127.0.0.1', 0);
  t.teardown(() => server.close(0));
  return { url: `http://127.0.0.1:${port}`, port, server, logs };
}

/** An unauthenticated GET route answering NDJSON from `run` (the streaming fixture of the shell tests). */
export function ndjsonRoute(
  path: string,
  run: (sink: StreamSink, ctx: RequestContext<unknown, unknown, unknown>) => Promise<void>,
): AnyRoute {
  return defineRoute({
    method: 'GET',
    path,
    auth: 'none',
    schemas: { response: { 200: z.string() } },
    openapi: { summary: `NDJSON stream ${path}` },
    handler: (ctx) => reply.ndjson((sink) => run(sink, ctx)),
  });
}
