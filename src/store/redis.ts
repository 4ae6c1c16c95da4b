import { Redis } from 'ioredis';
import { dependencyUnavailable } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { SCRIPTS, type ScriptName } from './redis-scripts.js';
import { checkIncrement, checkRateLimit, checkTtl } from './semantics.js';
import type { ChannelListener, RateLimitResult, SetOptions, SharedStore, Subscription } from './types.js';

/** Options for {@link connectRedisStore}. */
export interface RedisStoreOptions {
  /** REDIS_URL (may carry a password: never logged). */
  url: string;
  /** Prepended to every key (REDIS_KEY_PREFIX), so deployments and tests can share one Redis. */
  prefix: string;
  log?: Logger;
  /** Give up connecting after this long. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * The deadline of every command (REDIS_COMMAND_TIMEOUT_MS, default 1000): a stalled Redis fails the command after
   * this long instead of hanging the request that waits on it.
   */
  commandTimeoutMs?: number;
}

/** Default deadline of one store command (README, Reliability). */
export const STORE_COMMAND_TIMEOUT_MS = 1000;

type ScriptRunner = (key: string, ...args: Array<string | number>) => Promise<unknown>;

/**
 * SharedStore on Redis. Commands fail fast while Redis is unreachable (no offline queue: a rate-limit check
 * or an ownership write that waits for a reconnect is worse than one that fails), and ioredis keeps
 * reconnecting in the background. Every command has a deadline (`commandTimeoutMs`). A command that fails
 * because Redis is away (refused, reset, deadline) rejects with the 503 `DEPENDENCY_UNAVAILABLE` AppError, so a
 * request that needs the store answers 503 instead of 500; argument errors (a bad TTL) stay RangeErrors.
 * Create it with {@link connectRedisStore}.
 */
export class RedisStore implements SharedStore {
  readonly kind = 'redis' as const;
  readonly #redis: Redis;
  readonly #log: Logger | undefined;
  #closing: Promise<void> | undefined;
  /** Pub/sub: a second connection, opened on the first subscribe (a subscribed connection runs nothing else). */
  #subscriber: Redis | undefined;
  #subscriberLive = false;
  readonly #channels = new Map<string, Set<ChannelListener>>();
  /** Channels the live subscriber connection has confirmed. */
  readonly #confirmed = new Set<string>();

  /** Wraps a client built by {@link connectRedisStore}; the store owns and closes it. */
  constructor(redis: Redis, log?: Logger) {
    this.#redis = redis;
    this.#log = log;
    for (const [name, script] of Object.entries(SCRIPTS)) {
      redis.defineCommand(name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
    }
  }

  async get(key: string): Promise<string | null> {
    return unavailable(this.#redis.get(key));
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const ttl = options.ttlMs === undefined ? undefined : checkTtl(options.ttlMs);
    let reply: Promise<string | null>;
    if (ttl !== undefined && options.onlyIfAbsent) reply = this.#redis.set(key, value, 'PX', ttl, 'NX');
    else if (ttl !== undefined) reply = this.#redis.set(key, value, 'PX', ttl);
    else if (options.onlyIfAbsent) reply = this.#redis.set(key, value, 'NX');
    else reply = this.#redis.set(key, value);
    return (await unavailable(reply)) === 'OK';
  }

  async delete(key: string): Promise<boolean> {
    return (await unavailable(this.#redis.del(key))) > 0;
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
    const ttl = await unavailable(this.#redis.pttl(key));
    // -2: no such key; -1: no expiry.
    return ttl < 0 ? null : ttl;
  }

  async rateLimit(key: string, limit: number, periodMs: number, cost = 1): Promise<RateLimitResult> {
    checkRateLimit(limit, periodMs, cost);
    const reply = (await this.#run('parleyRateLimit', key, limit, periodMs, cost)) as number[];
    const [allowed = 0, remaining = 0, retryAfterMs = 0, resetMs = 0] = reply;
    return { allowed: allowed === 1, limit, remaining, retryAfterMs, resetMs };
  }

  subscribe(channel: string, listener: ChannelListener): Subscription {
    const name = this.#channelName(channel);
    let listeners = this.#channels.get(name);
    if (listeners === undefined) this.#channels.set(name, (listeners = new Set()));
    listeners.add(listener);
    const closed = this.#closing !== undefined;
    if (!closed) this.#startSubscriber();
    // Already live: subscribe this channel too; it is live once Redis confirms.
    if (this.#subscriberLive && !this.#confirmed.has(name)) {
      this.#subscriber?.subscribe(name).then(
        () => {
          this.#confirmed.add(name);
          listener.gap();
        },
        () => undefined,
      );
    } else if (this.#subscriberLive) listener.gap();
    const store = this;
    return {
      get live() {
        return store.#subscriberLive && store.#confirmed.has(name) && listeners.has(listener);
      },
      close: async () => {
        listeners.delete(listener);
      },
    };
  }

  async publish(channel: string, message: string): Promise<void> {
    await unavailable(this.#redis.publish(this.#channelName(channel), message));
  }

  /** Channels are not keys (ioredis does not prefix them): the key prefix is added here, so deployments stay apart. */
  #channelName(channel: string): string {
    return `${this.#redis.options.keyPrefix ?? ''}${channel}`;
  }

  #startSubscriber(): void {
    if (this.#subscriber !== undefined) return;
    const sub = this.#redis.duplicate({
      autoResubscribe: false,
      enableOfflineQueue: true,
      lazyConnect: false,
      keyPrefix: '',
    });
    this.#subscriber = sub;
    sub.on('error', () => undefined); // the command connection already logs Redis outages
    const down = () => {
      this.#subscriberLive = false;
      this.#confirmed.clear();
    };
    sub.on('close', down);
    sub.on('end', down);
    sub.on('ready', () => {
      // (Re)subscribe, then tell every listener about the gap, then trust deliveries again.
      const names = [...this.#channels.keys()];
      sub.subscribe(...names).then(
        () => {
          for (const n of names) this.#confirmed.add(n);
          for (const listeners of this.#channels.values()) for (const l of listeners) l.gap();
          this.#subscriberLive = sub.status === 'ready';
        },
        () => undefined,
      );
    });
    sub.on('message', (channel: string, message: string) => {
      for (const l of this.#channels.get(channel) ?? []) l.message(message);
    });
  }

  async ping(): Promise<void> {
    await unavailable(this.#redis.ping());
  }

  /** Sends QUIT (replies in flight still arrive); drops the socket if Redis is unreachable. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#subscriberLive = false;
      this.#subscriber?.disconnect();
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
    return unavailable(runner.call(this.#redis, key, ...args));
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
    commandTimeout: options.commandTimeoutMs ?? STORE_COMMAND_TIMEOUT_MS,
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
    log?.warn(
      { redis: where, err: { message: error.message, code: (error as NodeJS.ErrnoException).code } },
      'redis unavailable',
    );
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

/**
 * Rejects with the 503 AppError when Redis did not answer (deadline, refused, reset, not connected). A reply
 * error from Redis itself (WRONGTYPE, a script error) is a bug, not an outage, and passes through unchanged.
 */
async function unavailable<T>(command: Promise<T>): Promise<T> {
  try {
    return await command;
  } catch (err) {
    if (err instanceof Error && err.name === 'ReplyError') throw err;
    throw dependencyUnavailable('store', err);
  }
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
