import type { CompiledRoute } from './context.js';
import { deprecationResponseHeaders } from './openapi.js';
import type { AnyRoute, Authenticator } from './types.js';

/** The routes of one path pattern, by method, and whether any of them answers CORS preflights. */
export interface PathEntry {
  pattern: string;
  paramNames: string[];
  byMethod: Map<string, AnyRoute>;
  cors: boolean;
}

function paramNamesOf(pattern: string): string[] {
  return pattern
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
}

/** The router's tables, built once at start: routes grouped by path, and each route's fixed facts compiled. */
export function buildRouteTable(
  routes: readonly AnyRoute[],
  authenticators: Record<string, Authenticator>,
): { entries: Map<string, PathEntry>; compiledOf: Map<AnyRoute, CompiledRoute> } {
  const entries = new Map<string, PathEntry>();
  for (const route of routes) {
    if (!(route.auth in authenticators) && route.auth !== 'none') {
      throw new Error(`route ${route.method} ${route.path} names unknown authenticator "${route.auth}"`);
    }
    let entry = entries.get(route.path);
    if (!entry) {
      entry = { pattern: route.path, paramNames: paramNamesOf(route.path), byMethod: new Map(), cors: false };
      entries.set(route.path, entry);
    }
    if (entry.byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    entry.byMethod.set(route.method, route);
    entry.cors ||= route.cors === true;
  }

  const compiledOf = new Map<AnyRoute, CompiledRoute>();
  for (const route of routes) {
    compiledOf.set(route, {
      meta: Object.freeze({
        method: route.method,
        path: route.path,
        auth: route.auth,
        scope: route.scope,
        rateLimitExempt: route.rateLimitExempt === true,
      }),
      authenticator: route.auth === 'none' ? undefined : authenticators[route.auth],
      deprecationHeaders: route.openapi.deprecated ? deprecationResponseHeaders(route.openapi.deprecated) : undefined,
    });
  }
  return { entries, compiledOf };
}
