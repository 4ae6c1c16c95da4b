import type { Test } from 'tap';
import { z } from 'zod';
import {
  createApiKey,
  createAuthenticators,
  createUser,
  identityRoutes,
  principalOf,
  SCOPES,
  type Scope,
} from '../../src/auth/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Sql } from '../../src/db/index.js';
import { createHttpServer, defineRoute, reply, type AnyRoute, type HttpMethod } from '../../src/http/index.js';
import type { SharedStore } from '../../src/store/types.js';
import { captureLogger } from './log.js';
import { scratchDir } from './scratch.js';

export const TEST_PASSWORD = 'correct horse battery staple';
/** SECRET_KEY of identity shells (kept here so shell tests do not load the whole app). */
export const IDENTITY_TEST_SECRET_KEY = 'identity-test-secret-key-at-least-32-bytes';

let ownerCounter = 0;

export interface TestOwner {
  userId: string;
  accountId: string;
  email: string;
  password: string;
  /** An API key with the requested scopes (default: all). */
  secret: string;
  keyId: string;
}

/** A user + account + hosting account (plan free) + one API key with the given scopes (default every scope). */
export async function createOwner(
  sql: Sql,
  options: { scopes?: readonly Scope[]; email?: string; password?: string; name?: string } = {},
): Promise<TestOwner> {
  const email = options.email ?? `owner-${Date.now().toString(36)}-${++ownerCounter}@example.test`;
  const password = options.password ?? TEST_PASSWORD;
  const user = await createUser(sql, {
    email,
    password,
    ...(options.name !== undefined ? { name: options.name } : {}),
  });
  const key = await createApiKey(sql, {
    accountId: user.accountId,
    userId: user.userId,
    name: 'test key',
    scopes: options.scopes ?? SCOPES,
  });
  return { userId: user.userId, accountId: user.accountId, email, password, secret: key.secret, keyId: key.keyId };
}

/** Signs in through POST /api/auth/login (same-origin) and returns the `name=value` cookie to send back. */
export async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: baseUrl },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('parley_session='));
  if (!cookie) throw new Error('login answered without a session cookie');
  return cookie.split(';')[0]!;
}

/** Headers of a same-origin dashboard request carrying the session cookie. */
export function dashboardHeaders(baseUrl: string, cookie: string): Record<string, string> {
  return { cookie, origin: baseUrl, 'content-type': 'application/json' };
}

export function bearer(secret: string): Record<string, string> {
  return { authorization: `Bearer ${secret}` };
}

/** The path of the probe route {@link scopeProbeRoutes} registers for a scope. */
export function probePath(scope: Scope): string {
  return `/test/scope/${scope.replace(':', '-')}`;
}

const principalSchema = z.object({ principal: z.record(z.string(), z.unknown()) });

/**
 * Test-only routes answering the resolved principal: one `bearer` route per scope (GET /test/scope/<scope>),
 * one `bearer-or-keyless` route with the chat scope, one `admin` GET and POST, one `session` POST.
 */
export function probeRoutes(): AnyRoute[] {
  const answer = (path: string, method: HttpMethod, auth: string, scope?: Scope): AnyRoute =>
    defineRoute({
      method,
      path,
      auth,
      ...(scope ? { scope } : {}),
      schemas: { response: { 200: principalSchema } },
      openapi: { summary: `probe ${path}`, hidden: true },
      handler: (ctx) => reply.json({ principal: principalOf(ctx) }),
    });
  return [
    ...SCOPES.map((scope) => answer(probePath(scope), 'GET', 'bearer', scope)),
    answer('/test/keyless-or-chat', 'POST', 'bearer-or-keyless', 'chat'),
    answer('/api/admin/probe', 'GET', 'admin'),
    answer('/api/admin/probe', 'POST', 'admin'),
    answer('/test/session-mutation', 'POST', 'session'),
  ];
}

export interface IdentityShell {
  url: string;
  config: Readonly<Config>;
  /** Everything the shell and the identity capability logged. */
  logs: ReturnType<typeof captureLogger>;
}

/**
 * The identity capability on a bare shell (its authenticators, its routes, and {@link probeRoutes}), over the
 * given database and store: one "instance". Start two over one database and one Redis prefix for a fleet.
 */
export async function startIdentityShell(
  t: Test,
  options: { sql: Sql; store: SharedStore; env?: Record<string, string>; routes?: AnyRoute[] },
): Promise<IdentityShell> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: scratchDir('parley-identity-'),
    SECRET_KEY: IDENTITY_TEST_SECRET_KEY,
    ...options.env,
  });
  const logs = captureLogger('debug');
  const deps = { config, log: logs.log, sql: options.sql, store: options.store };
  const server = createHttpServer({
    log: logs.log,
    routes: [...identityRoutes(deps), ...probeRoutes(), ...(options.routes ?? [])],
    authenticators: createAuthenticators(deps),
    bodyLimitBytes: 64 * 1024,
    trustProxy: false,
    validateResponses: true,
  });
  const port = await server.listen('127.0.0.1', 0);
  t.teardown(() => server.close(0));
  return { url: `http://127.0.0.1:${port}`, config, logs };
}

/**
 * The guard every bearer route must have, for any route family: no key -> 401, malformed key -> 401, a key with
 * every scope but `scope` -> 403 AUTH_MISSING_SCOPE, a key with only `scope` -> neither 401 nor 403.
 */
export async function checkBearerGuard(
  t: Test,
  options: { url: string; sql: Sql; method: HttpMethod; path: string; scope: Scope; body?: unknown },
): Promise<void> {
  const call = (headers: Record<string, string>) =>
    fetch(`${options.url}${options.path}`, {
      method: options.method,
      headers: { ...headers, ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
  const label = `${options.method} ${options.path}`;
  let res = await call({});
  t.equal(res.status, 401, `${label}: no key is 401`);
  t.equal(((await res.json()) as { code: string }).code, 'AUTH_MISSING_KEY');
  res = await call({ authorization: 'Bearer sk_live_not-a-key' });
  t.equal(res.status, 401, `${label}: malformed key is 401`);
  t.equal(((await res.json()) as { code: string }).code, 'AUTH_INVALID_KEY');
  const without = await createOwner(options.sql, { scopes: SCOPES.filter((s) => s !== options.scope) });
  res = await call(bearer(without.secret));
  t.equal(res.status, 403, `${label}: a key without ${options.scope} is 403`);
  t.equal(((await res.json()) as { code: string }).code, 'AUTH_MISSING_SCOPE');
  const only = await createOwner(options.sql, { scopes: [options.scope] });
  res = await call(bearer(only.secret));
  t.not(res.status, 401, `${label}: a key with only ${options.scope} is let in`);
  t.not(res.status, 403, `${label}: a key with only ${options.scope} is let in`);
  await res.arrayBuffer();
}
