import type { Logger } from '../log/index.js';
import { checkConnection, createSql, describeDatabaseUrl } from './client.js';
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.js';
import { migrate, type AppliedMigration } from './migrate.js';
import { withQueryDeadline } from './query-deadline.js';
import type { Sql } from './types.js';

export type { Sql, TransactionSql } from './types.js';
export { createSql, checkConnection, describeDatabaseUrl, type CreateSqlOptions } from './client.js';
export { migrate, readMigrationFiles, MigrationError, MIGRATIONS_DIR } from './migrate.js';
export type { AppliedMigration, MigrateOptions, MigrationFile } from './migrate.js';
export { startEmbeddedPostgres, EMBEDDED_POOL_SIZE } from './embedded.js';
export type { EmbeddedPostgres, EmbeddedPostgresOptions } from './embedded.js';

/** Options for {@link openDatabase}, straight from Config. */
export interface OpenDatabaseOptions {
  /** DATABASE_URL; when absent the embedded PostgreSQL under `dataDir` is used. */
  databaseUrl?: string | undefined;
  /** DATA_DIR. */
  dataDir: string;
  /** DATABASE_POOL_SIZE; ignored for the embedded database (always {@link EMBEDDED_POOL_SIZE}). */
  poolSize: number;
  /**
   * DATABASE_QUERY_TIMEOUT_MS (0 = none). Migrations run without it. External PostgreSQL: the whole-query and the
   * connection deadline; embedded: the whole-query deadline only (waiting for its one connection included).
   */
  queryTimeoutMs?: number;
  log: Logger;
}

/** An open, migrated database. */
export interface Database {
  sql: Sql;
  /** The URL the client uses (no secrets for the embedded one; may hold a password otherwise: never log it). */
  url: string;
  embedded: boolean;
  /** The migrations this boot applied. */
  applied: AppliedMigration[];
  /** Closes the client (waiting for running queries), then the embedded server if any. */
  close(): Promise<void>;
}

/**
 * Opens the database the service runs on: DATABASE_URL when set, else the embedded PostgreSQL; proves it
 * answers, then applies pending migrations. On any failure everything opened so far is closed again.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const { log } = options;
  let embedded: EmbeddedPostgres | undefined;
  let url: string;
  let sql: Sql;
  /** The embedded database's client without the deadline: migrations run on it, and closing ends it. */
  let raw: Sql | undefined;
  if (options.databaseUrl) {
    url = options.databaseUrl;
    sql = createSql(url, {
      max: options.poolSize,
      log,
      ...(options.queryTimeoutMs ? { queryTimeoutMs: options.queryTimeoutMs } : {}),
    });
    log.info({ database: describeDatabaseUrl(url), poolSize: options.poolSize }, 'using postgres');
  } else {
    // +1 connection slot: a reconnect can arrive before the server has processed the old socket's close.
    embedded = await startEmbeddedPostgres({ dataDir: options.dataDir, maxConnections: EMBEDDED_POOL_SIZE + 1, log });
    url = embedded.url;
    // No idle timeout or lifetime: the socket is in-process, and reconnecting gains nothing.
    raw = createSql(url, { max: EMBEDDED_POOL_SIZE, log, idleTimeoutSeconds: 0, maxLifetimeSeconds: null });
    // Every query waits for the one connection; a holder that never lets go (a transaction waiting on something
    // that itself waits for the connection) must turn into 503s, not into a service that never answers again.
    sql = options.queryTimeoutMs ? withQueryDeadline(raw, options.queryTimeoutMs) : raw;
    if (options.poolSize !== EMBEDDED_POOL_SIZE) {
      log.info({ poolSize: EMBEDDED_POOL_SIZE }, 'embedded postgres uses one connection; DATABASE_POOL_SIZE ignored');
    }
  }

  const closeAll = async (): Promise<void> => {
    try {
      await (raw ?? sql).end({ timeout: 5 });
    } finally {
      await embedded?.close();
    }
  };

  let applied: AppliedMigration[];
  try {
    // The embedded server runs in this process: a first answer slower than the query deadline (a busy machine at
    // start-up) is not an outage, so it is proven on the client without the deadline, as the migrations run.
    await checkConnection(raw ?? sql, url);
    applied = await migrateWithoutDeadline(raw ?? sql, url, embedded === undefined, log);
  } catch (error) {
    await closeAll().catch((closeError: unknown) =>
      log.warn({ err: closeError }, 'database close after failed open failed'),
    );
    throw error;
  }

  let closing: Promise<void> | undefined;
  return {
    sql,
    url,
    embedded: embedded !== undefined,
    applied,
    close: () => (closing ??= closeAll()),
  };
}

/**
 * Migrations may legitimately run longer than the request deadline (an index on a big table): on an external
 * server they run on a short-lived client of their own without it. The embedded database has one connection, so
 * it migrates on the service's client before the deadline is put in front of it.
 */
async function migrateWithoutDeadline(
  sql: Sql,
  url: string,
  external: boolean,
  log: Logger,
): Promise<AppliedMigration[]> {
  if (!external) return migrate(sql, { log });
  const migrator = createSql(url, { max: 1, log });
  try {
    return await migrate(migrator, { log });
  } finally {
    await migrator.end({ timeout: 5 });
  }
}
