import { Redis } from 'ioredis';
import type { Logger } from '../log/index.js';
import { SCRIPTS, type ScriptName } from './redis-scripts.js';
import { checkIncrement, checkRateLimit, checkTtl } from './semantics.js';
import type { RateLimitResult, SetOptions, SharedStore } from './types.js';

/** Options for {@link connectRedisStore}. */
export interface RedisStoreOptions {
  /** REDIS_URL (may carry a password: never logged). */
  url: string;
  /** Prepended to every key (REDIS_KEY_PREFIX), so deployments and tests can share one Redis. */
  prefix: string;
  log?: Logger;
  /** Give up connecting after this long. Default 5000. */
  connectTimeoutMs?: number;
}

type ScriptRunner = (key: string, ...args: Array<string | number>) => Promise<unknown>;

/**
 * SharedStore on Redis. Commands fail fast while Redis is unreachable (no offline queue: a rate-limit check
 * or an ownership write that waits for a reconnect is worse than one that fails), and ioredis keeps
 * reconnecting in the background. Create it with {@link connectRedisStore}.
 */
export class RedisStore implements SharedStore {
  readonly kind = 'redis' as const;
  readonly #redis: Redis;
  readonly #log: Logger | undefined;
  #closing: Promise<void> | undefined;

  /** Wraps a client built by {@link connectRedisStore}; the store owns and closes it. */
  constructor(redis: Redis, log?: Logger) {
    this.#redis = redis;
    this.#log = log;
    for (const [name, script] of Object.entries(SCRIPTS)) {
      redis.defineCommand(name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }

  async get(key: string): Promise<string | null> {
    return this.#redis.get(key);
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const ttl = options.ttlMs === undefined ? undefined : checkTtl(options.ttlMs);
    let reply: string | null;
    if (ttl !== undefined && options.onlyIfAbsent) reply = await this.#redis.set(key, value, 'PX', ttl, 'NX');
    else if (ttl !== undefined) reply = await this.#redis.set(key, value, 'PX', ttl);
    else if (options.onlyIfAbsent) reply = await this.#redis.set(key, value, 'NX');
    else reply = await this.#redis.set(key, value);
    return reply === 'OK';
  }

  async delete(key: string): Promise<boolean> {
    return (await this.#redis.del(key)) > 0;
  }

  async compareAndSet(key: string, expected: string | null, next: string, ttlMs?: number): Promise<boolean> {
    const ttl = ttlMs === undefined ? '' : checkTtl(ttlMs);
    const reply = await this.#run('parleyCompareAndSet', key, expected === null ? '0' : '1', expected ?? '', next, ttl);
    return reply === 1;
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    return (await this.#run('parleyDeleteIfEquals', key, expected)) === 1;
  }

  async increment(key: string, by: number, ttlMs: number): Promise<number> {
    checkIncrement(by);
    return Number(await this.#run('parleyIncrementWithTtl', key, by, checkTtl(ttlMs)));
  }

  async ttlMs(key: string): Promise<number | null> {
    const ttl = await this.#redis.pttl(key);
    // -2: no such key; -1: no expiry.
    return ttl < 0 ? null : ttl;
  }

  async rateLimit(key: string, limit: number, periodMs: number, cost = 1): Promise<RateLimitResult> {
    checkRateLimit(limit, periodMs, cost);
    const reply = (await this.#run('parleyRateLimit', key, limit, periodMs, cost)) as number[];
    const [allowed = 0, remaining = 0, retryAfterMs = 0, resetMs = 0] = reply;
    return { allowed: allowed === 1, limit, remaining, retryAfterMs, resetMs };
  }

  async ping(): Promise<void> {
    await this.#redis.ping();
  }

  /** Sends QUIT (replies in flight still arrive); drops the socket if Redis is unreachable. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        if (this.#redis.status === 'ready') await this.#redis.quit();
        else this.#redis.disconnect();
      } catch {
        this.#redis.disconnect();
      }
      this.#log?.debug('redis store closed');
    })();
    return this.#closing;
  }

  #run(name: ScriptName, key: string, ...args: Array<string | number>): Promise<unknown> {
    const runner = (this.#redis as unknown as Record<ScriptName, ScriptRunner>)[name];
    return runner.call(this.#redis, key, ...args);
  }
}

/**
 * Connects to Redis and proves it answers (PING). Fails with a clear error, and leaves nothing retrying in
 * the background, when Redis is unreachable at boot.
 */
export async function connectRedisStore(options: RedisStoreOptions): Promise<RedisStore> {
  const { log } = options;
  const where = describeRedisUrl(options.url);
  const redis = new Redis(options.url, {
    keyPrefix: options.prefix,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    // Commands issued in the same tick share one write: under load (a rate-limit check and a key lookup per
    // request, many requests in flight) this saves a syscall per command without changing any semantics.
    enableAutoPipelining: true,
    // Redis Cluster / Sentinel are out of scope; a plain server or a managed single endpoint.
  });

  // Without a listener ioredis prints every failed reconnect to stderr. Log transitions only, not each retry.
  let healthy = true;
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
    if (!healthy) return;
    healthy = false;
    log?.warn({ redis: where, err: { message: error.message, code: (error as NodeJS.ErrnoException).code } }, 'redis unavailable');
  });
  redis.on('ready', () => {
    if (healthy) return;
    healthy = true;
    log?.info({ redis: where }, 'redis reconnected');
  });

  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    // connect() itself only says "Connection is closed."; the socket error says why.
    const reason = lastError ?? (error as Error);
    throw new Error(`Cannot reach Redis at ${where.host}:${where.port}: ${reason.message}`, { cause: reason });
  }
  healthy = true;
  log?.info({ redis: where }, 'redis store connected');
  return new RedisStore(redis, log);
}

/** Host, port and db of a Redis URL, without credentials. */
export function describeRedisUrl(url: string): { host: string; port: number; db: number } {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db: Number(parsed.pathname.replace(/^\//, '') || 0),
  };
}
