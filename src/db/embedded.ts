import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Logger } from '../log/index.js';
import { lockDataDir } from './data-dir-lock.js';

/**
 * The pool size the embedded database must be used with. PGlite is ONE backend session, and
 * pglite-socket 0.2.17 shares it between client connections by queueing individual wire-protocol messages:
 * it keeps other connections out only while `IsTransactionBlock()` is true, i.e. inside an explicit
 * BEGIN ... COMMIT *after* BEGIN has run. Between those points messages of several connections interleave
 * on the one session: postgres.js's extended-protocol batches (Parse/Bind/Execute/Sync) trample each
 * other's unnamed portal ("portal \"\" does not exist") and one connection's error aborts another's
 * implicit transaction. Measured with a pool of 4: concurrent `sql.begin` read-modify-write transactions
 * failed; with a pool of 1 they were all correct. So one connection, and postgres.js queues the rest,
 * which costs nothing: PGlite runs one statement at a time anyway.
 */
export const EMBEDDED_POOL_SIZE = 1;

/** Options for {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /** The service's DATA_DIR; the database lives in `${dataDir}/pglite`. */
  dataDir: string;
  /** Socket connections the server accepts; at least the client's pool size. */
  maxConnections: number;
  log?: Logger;
}

/** A running embedded PostgreSQL. */
export interface EmbeddedPostgres {
  /** postgres://postgres@127.0.0.1:<ephemeral port>/postgres (no password: loopback only). */
  url: string;
  /** Stops accepting connections (rolling back any open transaction), closes PGlite, releases the lock. */
  close(): Promise<void>;
}

/**
 * Starts PGlite (WASM PostgreSQL, data on disk) behind pglite-socket on 127.0.0.1 with an ephemeral port,
 * so the same driver and SQL run with or without DATABASE_URL. Limits worth knowing: single session
 * (see {@link EMBEDDED_POOL_SIZE}), no LISTEN/NOTIFY through the socket, query cancellation is ignored,
 * and only one process may open a data directory (enforced with a lock file).
 * First start runs initdb (a few seconds); later starts take well under a second.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { log } = options;
  const started = performance.now();
  const dir = join(options.dataDir, 'pglite');
  await mkdir(dir, { recursive: true });
  const releaseLock = await lockDataDir(join(options.dataDir, 'pglite.lock'), `The embedded database in ${dir}`);

  let db: PGlite | undefined;
  let server: PGLiteSocketServer | undefined;
  try {
    db = await PGlite.create({ dataDir: dir });
    server = new PGLiteSocketServer({
      db,
      host: '127.0.0.1',
      port: 0,
      maxConnections: Math.max(1, options.maxConnections),
    });
    await server.start();
  } catch (error) {
    await server?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    await releaseLock();
    throw new Error(`Could not start the embedded database in ${dir}: ${(error as Error).message}`, { cause: error });
  }

  const address = server.getServerConn();
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  log?.info({ dataDir: dir, port, durationMs: Math.round(performance.now() - started) }, 'embedded postgres started');

  const running = { db, server };
  let closing: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    close() {
      closing ??= (async () => {
        try {
          await running.server.stop();
          await running.db.close();
        } finally {
          await releaseLock();
        }
        log?.info({ dataDir: dir }, 'embedded postgres stopped');
      })();
      return closing;
    },
  };
}
