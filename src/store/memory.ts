import { checkIncrement, checkRateLimit, checkTtl, gcra } from './semantics.js';
import type { ChannelListener, RateLimitResult, SetOptions, SharedStore, Subscription } from './types.js';

/** Options for {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** The clock in ms (default Date.now); tests inject one they can advance. */
  now?: () => number;
  /** How often expired keys are swept (lazy expiry alone would keep never-read keys forever). Default 30 s. */
  sweepIntervalMs?: number;
}

interface Entry {
  value: string;
  /** Absolute ms on the store's clock; null never expires. */
  expiresAt: number | null;
}

/**
 * SharedStore in this process's memory: the single-instance default when REDIS_URL is unset. Same
 * semantics as RedisStore (one contract suite); every operation runs synchronously inside one call, which
 * is what makes compare-and-set and the rate limiter atomic here. Nothing is shared between processes.
 */
export class MemoryStore implements SharedStore {
  readonly kind = 'memory' as const;
  readonly #entries = new Map<string, Entry>();
  readonly #channels = new Map<string, Set<ChannelListener>>();
  readonly #now: () => number;
  readonly #sweep: NodeJS.Timeout;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#sweep = setInterval(() => this.#sweepExpired(), options.sweepIntervalMs ?? 30_000);
    // Housekeeping must never keep the process alive.
    this.#sweep.unref();
  }

  /** Keys held, including expired ones not yet swept; for tests and diagnostics. */
  get size(): number {
    return this.#entries.size;
  }

  async get(key: string): Promise<string | null> {
    return this.#read(key)?.value ?? null;
  }

  async set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const ttl = options.ttlMs === undefined ? undefined : checkTtl(options.ttlMs);
    if (options.onlyIfAbsent && this.#read(key)) return false;
    this.#write(key, value, ttl);
    return true;
  }

  async delete(key: string): Promise<boolean> {
    return this.#read(key) !== undefined && this.#entries.delete(key);
  }

  async compareAndSet(key: string, expected: string | null, next: string, ttlMs?: number): Promise<boolean> {
    const ttl = ttlMs === undefined ? undefined : checkTtl(ttlMs);
    const current = this.#read(key)?.value ?? null;
    if (current !== expected) return false;
    this.#write(key, next, ttl);
    return true;
  }

  async deleteIfEquals(key: string, expected: string): Promise<boolean> {
    if (this.#read(key)?.value !== expected) return false;
    return this.#entries.delete(key);
  }

  async increment(key: string, by: number, ttlMs: number): Promise<number> {
    checkIncrement(by);
    const ttl = checkTtl(ttlMs);
    const entry = this.#read(key);
    if (!entry) {
      this.#write(key, String(by), ttl);
      return by;
    }
    // Same refusal as Redis INCRBY on a non-integer value.
    if (!/^-?\d+$/.test(entry.value)) throw new Error('value is not an integer or out of range');
    const next = Number(entry.value) + by;
    if (!Number.isSafeInteger(next)) throw new Error('increment or decrement would overflow');
    entry.value = String(next);
    return next;
  }

  async ttlMs(key: string): Promise<number | null> {
    const entry = this.#read(key);
    if (!entry || entry.expiresAt === null) return null;
    return Math.max(0, Math.ceil(entry.expiresAt - this.#now()));
  }

  async rateLimit(key: string, limit: number, periodMs: number, cost = 1): Promise<RateLimitResult> {
    checkRateLimit(limit, periodMs, cost);
    const now = this.#now();
    const stored = Number(this.#read(key)?.value ?? Number.NaN);
    const step = gcra(Number.isFinite(stored) ? stored : null, now, limit, periodMs, cost);
    if (step.store) this.#write(key, String(step.store.tat), step.store.ttlMs);
    return step.result;
  }

  /** In-process delivery, synchronous inside publish(): always live, never a gap after the first. */
  subscribe(channel: string, listener: ChannelListener): Subscription {
    this.#assertOpen();
    let listeners = this.#channels.get(channel);
    if (listeners === undefined) this.#channels.set(channel, (listeners = new Set()));
    listeners.add(listener);
    listener.gap();
    return {
      live: true,
      close: async () => {
        listeners.delete(listener);
      },
    };
  }

  async publish(channel: string, message: string): Promise<void> {
    this.#assertOpen();
    for (const listener of this.#channels.get(channel) ?? []) listener.message(message);
  }

  async ping(): Promise<void> {
    this.#assertOpen();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    this.#channels.clear();
    this.#entries.clear();
  }

  /** The live entry, deleting it first when expired (lazy expiry). */
  #read(key: string): Entry | undefined {
    this.#assertOpen();
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt !== null && entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #write(key: string, value: string, ttlMs: number | undefined): void {
    this.#assertOpen();
    this.#entries.set(key, { value, expiresAt: ttlMs === undefined ? null : this.#now() + ttlMs });
  }

  #sweepExpired(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt !== null && entry.expiresAt <= now) this.#entries.delete(key);
    }
  }

  #assertOpen(): void {
    // Matches RedisStore after close(): using a closed store is a lifecycle bug, not an empty store.
    if (this.#closed) throw new Error('store is closed');
  }
}
