import { AppError } from './app-error.js';

/**
 * A shared dependency (PostgreSQL, the shared store) did not answer within its deadline or refused the connection
 * (docs/house-rules.md rule 18). Every request that needs it answers 503 with this code and a Retry-After, never a 500
 * or a hang.
 */
export const DEPENDENCY_UNAVAILABLE = 'DEPENDENCY_UNAVAILABLE';

/** `network`: a socket error whose dependency the shell cannot name. */
export type DependencyName = 'database' | 'store' | 'network';

/** Seconds a caller should wait before retrying a request that hit an unavailable dependency. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 2;

export function dependencyUnavailable(dependency: DependencyName, cause?: unknown): AppError {
  return new AppError(
    DEPENDENCY_UNAVAILABLE,
    503,
    'A service this request needs is not answering. Try again shortly.',
    {
      details: { dependency },
      headers: { 'retry-after': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
      ...(cause !== undefined ? { cause } : {}),
    },
  );
}

/** Socket-level codes: the peer is gone, unreachable or not answering. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // postgres.js's own connection errors.
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
]);

/**
 * PostgreSQL SQLSTATEs that mean "the server cannot serve you now", not "your query is wrong": class 08
 * (connection exception), 53300 too many connections, 57P01–57P03 shutdown / cannot connect now, 57014 canceled,
 * 55P03 lock not available (lock_timeout: another transaction held the row past the deadline).
 */
function isUnavailableSqlState(code: string): boolean {
  return (
    code.startsWith('08') ||
    code === '53300' ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '57014' ||
    code === '55P03'
  );
}

/**
 * The 503 for an error a dependency caused, or undefined when `err` is something else (a bug: the shell's 500).
 * Errors already mapped (an AppError) are left to the caller.
 */
export function asDependencyFailure(err: unknown): AppError | undefined {
  if (err instanceof AppError || typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  // postgres.js: PostgresError carries the SQLSTATE; connection errors carry a code from NETWORK_CODES.
  if (e.name === 'PostgresError')
    return isUnavailableSqlState(code) ? dependencyUnavailable('database', err) : undefined;
  if (NETWORK_CODES.has(code)) return dependencyUnavailable(code.startsWith('CONNECT') ? 'database' : 'network', err);
  return undefined;
}
