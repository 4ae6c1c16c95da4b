import type { Test } from 'tap';
import { buildApp, type BuildOptions, type ParleyApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { TEST_REDIS_URL } from './env.js';
import { captureLogger } from './log.js';
import { deleteKeysWithPrefix, uniquePrefix } from './store.js';
import { scratchDir } from './scratch.js';

export interface TestApp {
  url: string;
  port: number;
  app: ParleyApp;
  deps: Deps;
  config: Readonly<Config>;
  database: TestDatabase;
  redisPrefix: string;
  logs: ReturnType<typeof captureLogger>;
  /** Stops this instance now (as a crash or a deploy would), before the test ends; teardown then does nothing more. */
  stop(): Promise<void>;
}

export const TEST_SECRET_KEY = 'test-secret-key-that-is-at-least-32-bytes-long';

/**
 * Starts the whole service (real Postgres database of its own, real Redis under a unique prefix) on
 * 127.0.0.1:0, closed at teardown. Pass `database` and `redisPrefix` from another TestApp to start a
 * second instance of the same deployment.
 */
export async function startTestApp(
  t: Test,
  options: {
    env?: Record<string, string>;
    database?: TestDatabase;
    redisPrefix?: string;
    voice?: BuildOptions['voice'];
    knowledge?: BuildOptions['knowledge'];
    webhooks?: BuildOptions['webhooks'];
  } = {},
): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase(t));
  const redisPrefix = options.redisPrefix ?? uniquePrefix('app');
  const logs = captureLogger('info');
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: redisPrefix,
    DATA_DIR: scratchDir('parley-app-'),
    SECRET_KEY: TEST_SECRET_KEY,
    // The simulator's determinism, whatever NODE_ENV a test runs under (the default would pick the local voice).
    VOICE_PROVIDER: 'simulator',
    ...options.env,
  });
  const deps = await createDeps(config, logs.log);
  let app: ParleyApp;
  let port: number;
  try {
    app = buildApp(deps, {
      validateResponses: true,
      ...(options.voice ? { voice: options.voice } : {}),
      ...(options.knowledge ? { knowledge: options.knowledge } : {}),
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    });
    port = await app.listen('127.0.0.1', 0);
  } catch (err) {
    await deps.close();
    throw err;
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close(0);
    await deps.close();
  };
  t.teardown(async () => {
    await stop();
    if (!options.redisPrefix) await deleteKeysWithPrefix(redisPrefix);
  });
  return { url: `http://127.0.0.1:${port}`, port, app, deps, config, database, redisPrefix, logs, stop };
}
