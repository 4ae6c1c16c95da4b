import type { Logger } from '../log/index.js';
import type { Subscription } from '../store/types.js';
import { digestsEqual, hashSecret } from './api-key-secret.js';
import type { Scope } from './principal.js';
import * as q from './queries.js';
import { withTimeout } from './resilient-limiter.js';
import { STALE_KEYS_CHANNEL, staleKeyMarker } from './service.js';
import type { AccountStatus, IdentityDeps } from './types.js';
import { isScope } from './validation.js';

/** How long an instance trusts what it read about a key. Short: a change elsewhere shows within seconds. */
export const KEY_CACHE_TTL_MS = 2000;
const KEY_CACHE_MAX_ENTRIES = 10_000;
/** lastUsedAt is written at most once per key per minute, across all instances (issue: never a write per request). */
const LAST_USED_EVERY_MS = 60_000;
const STORE_TIMEOUT_MS = 500;

export interface ResolvedKey {
  keyId: string;
  accountId: string;
  userId: string;
  scopes: readonly Scope[];
  revoked: boolean;
  accountStatus: AccountStatus;
}

/** Where to log, read only when there is something to log (a request's child logger is made on first use). */
export interface LogSource {
  readonly log: Logger;
}

interface CacheEntry {
  key: ResolvedKey | null;
  expiresAt: number;
}

/**
 * Finds the key behind a well-formed secret: a per-instance cache (≤ 2 s, including "no such key") that costs
 * no network round trip while this instance is subscribed to {@link STALE_KEYS_CHANNEL}: revocation and status
 * changes publish the key ids there before they return, and every instance drops those entries on delivery (and
 * its whole cache whenever the subscription was interrupted). While the subscription is down, a cached entry is
 * checked against the "look again" marker in the shared store on every use, as before. The database
 * lookup is by the secret's SHA-256 (a prepared statement), and the stored digest is compared again in constant
 * time; concurrent misses for one secret share one lookup.
 */
export class ApiKeyResolver {
  readonly #deps: IdentityDeps;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #lastUsedLocal = new Map<string, number>();
  readonly #loading = new Map<string, Promise<ResolvedKey | null>>();
  readonly #subscription: Subscription | undefined;
  /** Bumped by every invalidation: a lookup that started before one must not cache what it read. */
  #epoch = 0;

  constructor(deps: IdentityDeps) {
    this.#deps = deps;
    this.#subscription = deps.store.subscribe?.(STALE_KEYS_CHANNEL, {
      message: (text) => this.#forget(new Set(text.split(','))),
      gap: () => this.#forget(undefined),
    });
  }

  /** Stops listening for invalidations (the store's close also ends it). */
  async close(): Promise<void> {
    await this.#subscription?.close();
  }

  resolve(secret: string, log: LogSource): ResolvedKey | null | Promise<ResolvedKey | null> {
    const digest = hashSecret(secret);
    const cached = this.#cache.get(digest);
    if (cached && cached.expiresAt > Date.now()) {
      if (cached.key === null) return null;
      if (this.#subscription?.live) return cached.key;
      return this.#isMarkedStale(cached.key.keyId, log).then((stale) => (stale ? this.#load(digest) : cached.key));
    }
    return this.#load(digest);
  }

  #load(digest: string): Promise<ResolvedKey | null> {
    let loading = this.#loading.get(digest);
    if (loading === undefined) {
      const epoch = this.#epoch;
      loading = q
        .findApiKeyByHash(this.#deps.sql, digest)
        .then((row) => {
          const key = row && digestsEqual(row.secretSha256, digest) ? toResolved(row) : null;
          if (epoch === this.#epoch) this.#remember(digest, key, Date.now());
          return key;
        })
        .finally(() => this.#loading.delete(digest));
      this.#loading.set(digest, loading);
    }
    return loading;
  }

  /** Drops the cached entries of these key ids (every entry when undefined). */
  #forget(keyIds: Set<string> | undefined): void {
    this.#epoch++;
    if (keyIds === undefined) {
      this.#cache.clear();
      return;
    }
    for (const [digest, entry] of this.#cache)
      if (entry.key !== null && keyIds.has(entry.key.keyId)) this.#cache.delete(digest);
  }

  /**
   * Updates lastUsedAt at most once a minute per key: a local gate (synchronous, undefined: nothing to wait for),
   * then a shared SET NX gate. Never rejects.
   */
  recordUse(keyId: string, log: LogSource): Promise<void> | undefined {
    const now = Date.now();
    const last = this.#lastUsedLocal.get(keyId);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return undefined;
    return this.#recordUseShared(keyId, now, log);
  }

  async #recordUseShared(keyId: string, now: number, log: LogSource): Promise<void> {
    if (this.#lastUsedLocal.size >= KEY_CACHE_MAX_ENTRIES) this.#lastUsedLocal.clear();
    this.#lastUsedLocal.set(keyId, now);
    let first: boolean;
    try {
      first = await withTimeout(
        this.#deps.store.set(`auth:key-used:${keyId}`, '1', { ttlMs: LAST_USED_EVERY_MS, onlyIfAbsent: true }),
        STORE_TIMEOUT_MS,
      );
    } catch {
      first = true; // store away: the local gate alone still limits this instance to one write a minute
    }
    if (!first) return;
    try {
      await q.touchApiKeyLastUsed(this.#deps.sql, keyId);
    } catch (err) {
      log.log.warn({ err, keyId }, 'could not record api key use');
    }
  }

  async #isMarkedStale(keyId: string, log: LogSource): Promise<boolean> {
    try {
      return (await withTimeout(this.#deps.store.get(staleKeyMarker(keyId)), STORE_TIMEOUT_MS)) !== null;
    } catch (err) {
      // The cache entry is at most KEY_CACHE_TTL_MS old: trusting it briefly beats failing every request.
      log.log.debug(
        { err: { message: (err as Error).message } },
        'stale-key marker unreadable; trusting the short cache',
      );
      return false;
    }
  }

  #remember(digest: string, key: ResolvedKey | null, now: number): void {
    this.#cache.delete(digest);
    if (this.#cache.size >= KEY_CACHE_MAX_ENTRIES) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(digest, { key, expiresAt: now + KEY_CACHE_TTL_MS });
  }
}

function toResolved(row: q.ResolvedKeyRow): ResolvedKey {
  return {
    keyId: row.keyId,
    accountId: row.accountId,
    userId: row.userId ?? row.ownerUserId,
    scopes: Object.freeze(row.scopes.filter(isScope)),
    revoked: row.revoked,
    accountStatus: row.accountStatus,
  };
}
