import type { Logger } from '../log/index.js';
import { MemoryStore } from '../store/index.js';
import type { RateLimitResult, SharedStore } from '../store/types.js';

/** A store call that takes longer than this counts as "store unreachable" (ioredis has no command timeout). */
const STORE_TIMEOUT_MS = 500;
const WARN_EVERY_MS = 60_000;

/**
 * Rate limits on the shared store (GCRA in one Lua step on Redis, so every instance shares the bucket), with a
 * per-instance fallback when the store fails or hangs: traffic is neither blocked nor unlimited while Redis is
 * away (issue: identity, Build 4). The fallback is logged at most once a minute.
 */
export class ResilientRateLimiter {
  readonly #store: SharedStore;
  readonly #log: Logger;
  readonly #fallback = new MemoryStore();
  #lastWarnAt = Number.NEGATIVE_INFINITY;

  constructor(store: SharedStore, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  async limit(key: string, limit: number, periodMs: number, cost = 1): Promise<RateLimitResult> {
    try {
      return await withTimeout(this.#store.rateLimit(key, limit, periodMs, cost), STORE_TIMEOUT_MS);
    } catch (err) {
      const now = Date.now();
      if (now - this.#lastWarnAt >= WARN_EVERY_MS) {
        this.#lastWarnAt = now;
        this.#log.warn(
          { err: { message: (err as Error).message }, store: this.#store.kind },
          'rate limit store unreachable; using per-instance limits',
        );
      }
      return this.#fallback.rateLimit(key, limit, periodMs, cost);
    }
  }
}

/** Rejects when `promise` has not settled within `ms` (the promise itself is left to settle unobserved). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`store did not answer within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
