import type { RateLimitResult } from '../store/types.js';

/** What the leased limiter takes tokens from: the shared GCRA bucket (with its per-instance fallback). */
export interface TokenSource {
  limit(key: string, limit: number, periodMs: number, cost: number): Promise<RateLimitResult>;
}

/** A lease is at most this share of the limit, so what one instance holds unspent is at most 1% of it. */
const LEASE_DIVISOR = 100;
/** And never more than this many requests ("small leases"). */
export const MAX_LEASE = 100;
/** Unspent tokens are dropped after this long, so a quiet instance does not sit on a busy key's budget. */
export const LEASE_TTL_MS = 1000;
const MAX_KEYS = 10_000;

/** Requests one lease carries for a limit: 1 (a shared-store call per request, exact) below 200 per period. */
export function leaseSizeFor(limit: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(limit / LEASE_DIVISOR)));
}

interface Bucket {
  tokens: number;
  expiresAt: number;
  /** The shared bucket's remaining count when the current lease was granted (for the RateLimit header). */
  remainingAtGrant: number;
  resetAt: number;
  /** Refused by the shared bucket: refuse locally, without asking again, until then. */
  deniedUntil: number;
  pending: Promise<void> | undefined;
}

/**
 * A per-key rate limit that costs a shared-store round trip per lease instead of per request.
 * Each instance takes tokens from the shared GCRA bucket in leases of {@link leaseSizeFor}(limit) requests
 * (the GCRA step with `cost` = lease size, so a lease is paid for before any of its requests pass) and spends
 * them locally; a refused lease is retried once for whatever the bucket still has. So the instances together
 * never let more through than the shared bucket allows; what a lease costs is the other way round: tokens an
 * instance holds unspent (at most one lease each, for at most {@link LEASE_TTL_MS}) are not available to the
 * others. Limits under 200 per period use leases of one: exactly the per-request behaviour. Once the bucket
 * refuses, the instance refuses locally until the Retry-After the bucket gave, so a client hammering an
 * exhausted key costs no round trips either.
 */
export class LeasedRateLimiter {
  readonly #source: TokenSource;
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(source: TokenSource, now: () => number = Date.now) {
    this.#source = source;
    this.#now = now;
  }

  /** Synchronous while this instance holds tokens for the key (or knows it is refused); else one lease call. */
  limit(key: string, limit: number, periodMs: number): RateLimitResult | Promise<RateLimitResult> {
    const lease = leaseSizeFor(limit);
    if (lease === 1) return this.#source.limit(key, limit, periodMs, 1);
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= MAX_KEYS) this.#evict(now);
      bucket = { tokens: 0, expiresAt: 0, remainingAtGrant: 0, resetAt: 0, deniedUntil: 0, pending: undefined };
      this.#buckets.set(key, bucket);
    }
    if (bucket.tokens > 0 && now < bucket.expiresAt) {
      bucket.tokens--;
      return {
        allowed: true,
        limit,
        remaining: Math.min(limit, bucket.remainingAtGrant + bucket.tokens),
        retryAfterMs: 0,
        resetMs: Math.max(0, bucket.resetAt - now),
      };
    }
    if (now < bucket.deniedUntil) {
      return {
        allowed: false,
        limit,
        remaining: 0,
        retryAfterMs: bucket.deniedUntil - now,
        resetMs: Math.max(0, bucket.resetAt - now),
      };
    }
    // One lease call per key at a time: requests arriving meanwhile wait for it, then draw from it (or ask again).
    const b = bucket;
    b.pending ??= this.#takeLease(key, b, limit, periodMs, lease).finally(() => (b.pending = undefined));
    return b.pending.then(() => this.limit(key, limit, periodMs));
  }

  async #takeLease(key: string, bucket: Bucket, limit: number, periodMs: number, lease: number): Promise<void> {
    let result = await this.#source.limit(key, limit, periodMs, lease);
    let granted = lease;
    if (!result.allowed && result.remaining > 0) {
      // Near the end of the budget: take what is left rather than refusing requests the bucket would allow.
      granted = Math.min(lease, result.remaining);
      result = await this.#source.limit(key, limit, periodMs, granted);
    }
    const now = this.#now();
    bucket.resetAt = now + result.resetMs;
    if (result.allowed) {
      bucket.tokens = granted;
      bucket.expiresAt = now + LEASE_TTL_MS;
      bucket.remainingAtGrant = result.remaining;
      bucket.deniedUntil = 0;
      return;
    }
    // GCRA's retry-after for `granted` requests is (granted - 1) intervals later than for one request.
    const interval = periodMs / limit;
    bucket.tokens = 0;
    bucket.deniedUntil = now + Math.max(1, Math.ceil(result.retryAfterMs - (granted - 1) * interval));
  }

  #evict(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.pending === undefined && (bucket.tokens === 0 || now >= bucket.expiresAt) && now >= bucket.deniedUntil)
        this.#buckets.delete(key);
    }
    if (this.#buckets.size >= MAX_KEYS) this.#buckets.clear();
  }
}
