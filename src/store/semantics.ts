import type { RateLimitResult } from './types.js';

/**
 * What both SharedStore implementations agree on: argument rules and the GCRA arithmetic. The Redis Lua
 * script in redis-scripts.ts mirrors {@link gcra} line for line; the contract suite holds them together.
 */

/**
 * Slack (ms) in the "may it pass yet" comparison, so a caller who waits exactly `retryAfterMs` is never
 * refused by float rounding of the stored arrival time.
 */
export const GCRA_EPSILON_MS = 0.001;

/** A TTL in whole milliseconds (Redis PX takes integers); rejects zero, negatives and non-numbers. */
export function checkTtl(ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`ttlMs must be a positive number, got ${ttlMs}`);
  return Math.ceil(ttlMs);
}

export function checkIncrement(by: number): void {
  if (!Number.isSafeInteger(by)) throw new RangeError(`increment must be a safe integer, got ${by}`);
}

export function checkRateLimit(limit: number, periodMs: number, cost: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (!Number.isFinite(periodMs) || periodMs <= 0) throw new RangeError(`periodMs must be positive, got ${periodMs}`);
  // A cost above the burst could never pass; refusing it forever would hide a caller bug.
  if (!Number.isFinite(cost) || cost < 0 || cost > limit) {
    throw new RangeError(`cost must be between 0 and limit (${limit}), got ${cost}`);
  }
}

/** The outcome of one GCRA step: the answer, and the arrival time to store (null: leave the key alone). */
export interface GcraStep {
  result: RateLimitResult;
  store: { tat: number; ttlMs: number } | null;
}

/**
 * Generic Cell Rate Algorithm: emission interval T = periodMs / limit, burst = limit (delay tolerance =
 * periodMs). State is one number, the theoretical arrival time (TAT) of the bucket. A request of `cost`
 * passes when `now >= max(TAT, now) + cost*T - periodMs`. A full bucket is the absent key, so the key
 * expires when TAT passes.
 */
export function gcra(storedTat: number | null, now: number, limit: number, periodMs: number, cost: number): GcraStep {
  const interval = periodMs / limit;
  const tat = storedTat !== null && storedTat > now ? storedTat : now;
  const newTat = tat + cost * interval;
  const allowAt = newTat - periodMs;
  const allowed = now >= allowAt - GCRA_EPSILON_MS;
  const current = allowed ? newTat : tat;
  const remaining = Math.min(limit, Math.max(0, Math.floor((now + periodMs - current) / interval + 1e-9)));
  return {
    result: {
      allowed,
      limit,
      remaining,
      // Ceil: never a moment earlier than the request would pass.
      retryAfterMs: allowed ? 0 : Math.max(1, Math.ceil(allowAt - now)),
      resetMs: Math.max(0, Math.ceil(current - now)),
    },
    store: allowed && cost > 0 ? { tat: newTat, ttlMs: Math.max(1, Math.ceil(newTat - now)) } : null,
  };
}
