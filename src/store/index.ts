import type { Logger } from '../log/index.js';
import { MemoryStore } from './memory.js';
import { connectRedisStore } from './redis.js';
import type { SharedStore } from './types.js';

export type { RateLimitResult, SetOptions, SharedStore } from './types.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.js';
export { RedisStore, connectRedisStore, type RedisStoreOptions } from './redis.js';

/** Options for {@link createStore}, straight from Config. */
export interface CreateStoreOptions {
  /** REDIS_URL; when absent the in-process MemoryStore is used (one instance only). */
  redisUrl?: string | undefined;
  /** REDIS_KEY_PREFIX. */
  prefix: string;
  /** REDIS_COMMAND_TIMEOUT_MS: the deadline of one store command. */
  commandTimeoutMs?: number;
  log: Logger;
}

/**
 * The shared store for this deployment: Redis when REDIS_URL is set (rejects at boot when it does not
 * answer: silently falling back to memory would split state between instances), else memory.
 */
export async function createStore(options: CreateStoreOptions): Promise<SharedStore> {
  if (options.redisUrl) {
    return connectRedisStore({
      url: options.redisUrl,
      prefix: options.prefix,
      log: options.log,
      ...(options.commandTimeoutMs !== undefined ? { commandTimeoutMs: options.commandTimeoutMs } : {}),
    });
  }
  options.log.info('using in-memory shared store; state is not shared between instances (set REDIS_URL to share)');
  return new MemoryStore();
}
