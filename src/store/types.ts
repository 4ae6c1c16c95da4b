/**
 * The shared-state seam: what instances of one deployment share (ownership records, rate-limit buckets,
 * tombstones, idempotency keys). Two real implementations (Redis, memory) pass one contract suite
 * (test/store/contract.ts). Keys given here are relative; implementations add their own prefix.
 */
export interface RateLimitResult {
  /** Whether this request may pass (and was counted). */
  allowed: boolean;
  /** The configured limit (requests per period). */
  limit: number;
  /** Requests that could still pass right now. */
  remaining: number;
  /** When refused: milliseconds until one request would pass. 0 when allowed. */
  retryAfterMs: number;
  /** Milliseconds until the bucket is completely full again. */
  resetMs: number;
}

export interface SetOptions {
  /** Expire the key after this many milliseconds. */
  ttlMs?: number;
  /** Only set when the key does not exist (SET NX). */
  onlyIfAbsent?: boolean;
}

export interface SharedStore {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** Returns false only when onlyIfAbsent was given and the key existed. */
  set(key: string, value: string, options?: SetOptions): Promise<boolean>;
  /** Returns whether a key was removed. */
  delete(key: string): Promise<boolean>;
  /**
   * Atomically replace the value when it currently equals `expected` (null: the key is absent).
   * The fencing primitive for ownership records. `ttlMs` is the new value's expiry; without it the key
   * does not expire (like `set`), so renewals must pass it every time.
   */
  compareAndSet(key: string, expected: string | null, next: string, ttlMs?: number): Promise<boolean>;
  /** Atomically delete the key when its value equals `expected`. */
  deleteIfEquals(key: string, expected: string): Promise<boolean>;
  /**
   * Atomically add `by` (a safe integer; creating at 0); the TTL is set when the key is created and never
   * extended. Returns the new value. Rejects when the key holds a non-integer.
   */
  increment(key: string, by: number, ttlMs: number): Promise<number>;
  /** Remaining TTL in ms, or null when the key is absent or has none. */
  ttlMs(key: string): Promise<number | null>;
  /**
   * GCRA rate limit in one atomic step: `limit` requests per `periodMs` with a burst of `limit`. A full
   * bucket lets `limit` pass at once, then one more every periodMs/limit. It caps the rate, not a fixed
   * window's count: a window of `periodMs` can see up to 2*limit (a full burst plus the refill during the
   * window). `cost` (default 1, from 0 up to `limit`) counts as that many requests; 0 only reads the
   * state. Refused requests are not counted. Instances sharing a Redis share the bucket and its clock
   * (the Redis server's TIME).
   */
  rateLimit(key: string, limit: number, periodMs: number, cost?: number): Promise<RateLimitResult>;
  /**
   * Messages to every instance on `channel` (Redis pub/sub; in-process for memory). Delivery is at most once: while
   * the subscription is not `live` messages may be lost, and `listener.gap()` runs each time it becomes live again,
   * so a listener caching what the messages invalidate drops its cache there. Optional: a store without it makes
   * callers fall back to reading the shared state per use.
   */
  subscribe?(channel: string, listener: ChannelListener): Subscription;
  /** Publishes to every live subscription of `channel`, on every instance, before resolving. */
  publish?(channel: string, message: string): Promise<void>;
  /** Resolves when the backing service answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ChannelListener {
  message(text: string): void;
  /** Messages may have been missed (first subscription, reconnect): drop whatever they would have invalidated. */
  gap(): void;
}

export interface Subscription {
  /** True while messages are being delivered; false before the first subscription and while reconnecting. */
  readonly live: boolean;
  close(): Promise<void>;
}
