import { docsRoutesFor } from './docs/index.js';
import type { Deps } from './deps.js';
import { healthRoutes } from './health/routes.js';
import { buildOpenApiDocument, createHttpServer, type AnyRoute, type Authenticator, type HttpServer, type OpenApiOptions } from './http/index.js';

export const API_VERSION = '1.3.0';

export interface BuildOptions {
  /** Check every success body against its schema (on in tests). */
  validateResponses?: boolean;
}

export interface ParleyApp {
  readonly server: HttpServer;
  readonly routes: readonly AnyRoute[];
  /** The v1 OpenAPI document (the contract of record). */
  readonly openapi: Record<string, unknown>;
  listen(host: string, port: number): Promise<number>;
  /** Drain: readiness 503, listen socket closed, in-flight finished or cut at the deadline. */
  close(graceMs: number): Promise<void>;
}

/** Which authenticators each route family uses, and how they read in OpenAPI. */
export const openApiSecurity: Pick<OpenApiOptions, 'security' | 'securitySchemes'> = {
  security: {
    none: [],
    bearer: [{ bearerAuth: [] }],
    'bearer-or-keyless': [{}, { bearerAuth: [] }],
    keyless: [],
    'control-token': [],
  },
  securitySchemes: {
    bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: sk_live_...' },
  },
};

/** Registers every capability's routes on one uWS app. Never listens by itself (main.ts does). */
export function buildApp(deps: Deps, options: BuildOptions = {}): ParleyApp {
  const authenticators: Record<string, Authenticator> = {};
  let server: HttpServer | undefined;
  let documentBytes: Buffer | undefined;

  const routes: AnyRoute[] = [
    ...healthRoutes(
      [
        { name: 'database', check: async () => void (await deps.sql`select 1`) },
        { name: 'store', check: () => deps.store.ping() },
      ],
      () => server?.draining ?? false,
    ),
    ...docsRoutesFor(() => documentBytes!),
  ];

  const openapi = v1Document(routes);
  documentBytes = Buffer.from(JSON.stringify(openapi));
  server = createHttpServer({
    log: deps.log,
    routes,
    authenticators,
    bodyLimitBytes: deps.config.BODY_LIMIT_BYTES,
    trustProxy: deps.config.TRUST_PROXY,
    validateResponses: options.validateResponses ?? false,
  });
  const httpServer = server;
  return {
    server: httpServer,
    routes,
    openapi,
    listen: (host, port) => httpServer.listen(host, port),
    close: (graceMs) => httpServer.close(graceMs),
  };
}

export function v1Document(routes: readonly AnyRoute[]): Record<string, unknown> {
  return buildOpenApiDocument(routes, {
    title: 'Parley API',
    version: API_VERSION,
    description: 'Hosted AI assistants by text chat and realtime voice. Errors share one body: {error, code, reason?, details?, requestId}.',
    include: (route) => route.path.startsWith('/api/v1/') && route.openapi.hidden !== true,
    ...openApiSecurity,
  });
}
