import postgres from 'postgres';
import type { Logger } from '../log/index.js';
import { deadlineSocket } from './deadline-socket.js';
import { withQueryDeadline } from './query-deadline.js';
import { withReservingBegin } from './transaction.js';
import type { Sql } from './types.js';

export type { Sql, TransactionSql } from './types.js';

/** Options for {@link createSql}. */
export interface CreateSqlOptions {
  /** Pool size: the most connections this client opens. */
  max: number;
  /** Server notices go to this logger at debug level; silenced when absent. */
  log?: Logger;
  /** Close a connection idle this long (seconds); 0 keeps idle connections open. Default 30. */
  idleTimeoutSeconds?: number;
  /** Recycle connections after this long (seconds); null never. Default: postgres.js (30–60 min, jittered). */
  maxLifetimeSeconds?: number | null;
  /** Give up opening a connection after this long (seconds). Default 10. */
  connectTimeoutSeconds?: number;
  /**
   * DATABASE_QUERY_TIMEOUT_MS: every query settles within this long, waiting for a connection included, else it
   * fails with 503 DEPENDENCY_UNAVAILABLE and is cancelled (query-deadline.ts); a connection whose server stops
   * answering is dropped after it (deadline-socket.ts). 0 or absent: no deadline (migrations, the embedded database).
   */
  queryTimeoutMs?: number;
}

/**
 * int8 parsed to a JS number. Every int8 Parley stores fits: money is in micros (< 2^53), and
 * `count(*)`/`sum(int)` come back as int8 too, where a string would be a trap for callers.
 * numeric (OID 1700) is untouched and stays a string.
 */
const int8AsNumber = {
  to: 20,
  from: [20],
  serialize: (value: number | bigint) => String(value),
  parse: (value: string) => Number(value),
};

/**
 * Column names only: snake_case in SQL, camelCase in JS, both directions (`sql(obj)` maps keys to
 * snake_case). Deliberately NOT `postgres.camel`, which also rewrites the keys *inside* json/jsonb
 * values: a stored webhook payload or settings object with snake_case keys would come back altered.
 */
const camelColumns = {
  column: { from: postgres.toCamel, to: postgres.fromCamel },
};

/**
 * Creates the postgres.js client every module receives (never a module singleton). Connections open
 * lazily on the first query; {@link checkConnection} proves the server answers.
 */
export function createSql(url: string, options: CreateSqlOptions): Sql {
  const { log } = options;
  const sql = postgres(url, {
    max: options.max,
    transform: camelColumns,
    types: { int8: int8AsNumber },
    idle_timeout: options.idleTimeoutSeconds ?? 30,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    // postgres.js grows the reconnect delay 3^n up to 20 s per failed attempt; after an outage with many refused
    // attempts that kept the service down for 20 s after PostgreSQL was back. Cap it at 2 s.
    backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 2),
    ...(options.maxLifetimeSeconds !== undefined ? { max_lifetime: options.maxLifetimeSeconds } : {}),
    // With a deadline, a wait for a lock is bounded by the server: a statement queued behind a row lock escaped the
    // socket's deadline (a lock held by another transaction kept a request waiting as long as it was held), so
    // lock_timeout cuts the wait, failing as the 503 (errors/dependency.ts). Long statements stay the socket's to cut.
    connection: {
      application_name: 'parley',
      ...(options.queryTimeoutMs ? { lock_timeout: options.queryTimeoutMs } : {}),
    },
    ...(options.queryTimeoutMs ? { socket: deadlineSocket(options.queryTimeoutMs) } : {}),
    // Notices (e.g. "relation already exists, skipping") are routine; keep them out of stdout.
    onnotice: (notice) => {
      log?.debug(
        { notice: { severity: notice.severity, code: notice.code, message: notice.message } },
        'postgres notice',
      );
    },
  });
  // The custom int8 type widens the client's type parameter; callers only ever see the plain alias.
  // Transactions take their connection before sending BEGIN (transaction.ts).
  const client = withReservingBegin(sql as unknown as Sql);
  return options.queryTimeoutMs ? withQueryDeadline(client, options.queryTimeoutMs) : client;
}

/** Where a database URL points, without user or password: safe for logs and error messages. */
export function describeDatabaseUrl(url: string): { host: string; port: number; database: string } {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port === '' ? 5432 : Number(parsed.port),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres',
  };
}

/** Resolves when the server answers a query; rejects with a message naming host and port (never credentials). */
export async function checkConnection(sql: Sql, url: string): Promise<void> {
  try {
    await sql`select 1`;
  } catch (error) {
    const where = describeDatabaseUrl(url);
    throw new Error(`Cannot reach PostgreSQL at ${where.host}:${where.port}/${where.database}: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name;
  return String(error);
}
