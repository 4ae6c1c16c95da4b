import type { Config } from './config/index.js';
import { openDatabase } from './db/index.js';
import type { Sql } from './db/types.js';
import type { Logger } from './log/index.js';
import { createStore } from './store/index.js';
import type { SharedStore } from './store/types.js';

/** The I/O clients, created in order and closed in reverse. Passed down; never module singletons. */
export interface Deps {
  readonly config: Readonly<Config>;
  readonly log: Logger;
  readonly sql: Sql;
  readonly store: SharedStore;
  /** True when running on the embedded PostgreSQL (no DATABASE_URL). */
  readonly embeddedDatabase: boolean;
  close(): Promise<void>;
}

export async function createDeps(config: Readonly<Config>, log: Logger): Promise<Deps> {
  const closers: Array<{ name: string; close: () => Promise<void> }> = [];
  const closeAll = async () => {
    for (const { name, close } of closers.reverse().splice(0)) {
      try {
        await close();
      } catch (err) {
        log.error({ err, dependency: name }, 'closing a dependency failed');
      }
    }
  };
  try {
    const database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      poolSize: config.DATABASE_POOL_SIZE,
      log,
    });
    closers.push({ name: 'database', close: () => database.close() });
    const store = await createStore({ redisUrl: config.REDIS_URL, prefix: config.REDIS_KEY_PREFIX, log });
    closers.push({ name: 'store', close: () => store.close() });
    log.info({ database: database.embedded ? 'embedded' : 'external', store: store.kind }, 'dependencies ready');
    return { config, log, sql: database.sql, store, embeddedDatabase: database.embedded, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
