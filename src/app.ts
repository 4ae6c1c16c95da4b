import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './config/index.js';
import { createSql } from './db/index.js';
import type { Deps } from './deps.js';
import { docsRoutesFor } from './docs/index.js';
import { healthRoutes } from './health/routes.js';
import { buildOpenApiDocument, createHttpServer, type AnyRoute, type AnySocketRoute, type Authenticator, type HttpServer, type OpenApiOptions } from './http/index.js';
import { createLogger } from './log/index.js';
import { MemoryStore } from './store/index.js';

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

/** How each authenticator reads in OpenAPI. */
export const openApiSecurity: Pick<OpenApiOptions, 'security' | 'securitySchemes'> = {
  security: {
    none: [],
    bearer: [{ bearerAuth: [] }],
    'bearer-or-keyless': [{}, { bearerAuth: [] }],
    'control-token': [],
  },
  securitySchemes: {
    bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: sk_live_...' },
  },
};

/** What the route table needs from the running app, late-bound. */
export interface AppHooks {
  isDraining(): boolean;
  openApiBytes(): Buffer;
}

/**
 * Every capability's routes, authenticators and sockets. Building them does no I/O, so the same table
 * serves the server, the OpenAPI document and the fingerprint.
 */
export function collectCapabilities(deps: Deps, hooks: AppHooks): { routes: AnyRoute[]; authenticators: Record<string, Authenticator>; sockets: AnySocketRoute[] } {
  const authenticators: Record<string, Authenticator> = {};
  const sockets: AnySocketRoute[] = [];
  const routes: AnyRoute[] = [
    ...healthRoutes(
      [
        { name: 'database', check: async () => void (await deps.sql`select 1`) },
        { name: 'store', check: () => deps.store.ping() },
      ],
      hooks.isDraining,
    ),
    ...docsRoutesFor(hooks.openApiBytes),
  ];
  return { routes, authenticators, sockets };
}

/** Registers every capability on one uWS app. Never listens by itself (main.ts does). */
export function buildApp(deps: Deps, options: BuildOptions = {}): ParleyApp {
  let server: HttpServer | undefined;
  let documentBytes: Buffer | undefined;
  const { routes, authenticators, sockets } = collectCapabilities(deps, {
    isDraining: () => server?.draining ?? false,
    openApiBytes: () => documentBytes!,
  });
  const openapi = v1Document(routes);
  documentBytes = Buffer.from(JSON.stringify(openapi));
  const httpServer = createHttpServer({
    log: deps.log,
    routes,
    sockets,
    authenticators,
    bodyLimitBytes: deps.config.BODY_LIMIT_BYTES,
    trustProxy: deps.config.TRUST_PROXY,
    validateResponses: options.validateResponses ?? false,
  });
  server = httpServer;
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

/**
 * The v1 document without a running service (for `npm run openapi:fingerprint`): the route table is
 * built over clients that are never used (postgres.js connects lazily; the memory store does no I/O).
 */
export function routeTableDocument(): Record<string, unknown> {
  const config = loadConfig({ DATA_DIR: join(tmpdir(), 'parley-openapi'), SECRET_KEY: 'x'.repeat(32), LOG_LEVEL: 'silent' });
  const log = createLogger({ level: 'silent' });
  const sql = createSql('postgres://openapi.invalid/none', { max: 1, log });
  const store = new MemoryStore();
  const deps: Deps = { config, log, sql, store, embeddedDatabase: false, close: async () => undefined };
  const { routes } = collectCapabilities(deps, { isDraining: () => false, openApiBytes: () => Buffer.alloc(0) });
  void store.close();
  void sql.end({ timeout: 0 });
  return v1Document(routes);
}
