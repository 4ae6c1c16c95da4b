import type { Logger } from '../log/index.js';
import { digestsEqual, hashSecret } from './api-key-secret.js';
import type { Scope } from './principal.js';
import * as q from './queries.js';
import { withTimeout } from './resilient-limiter.js';
import { staleKeyMarker } from './service.js';
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

interface CacheEntry {
  key: ResolvedKey | null;
  expiresAt: number;
}

/**
 * Finds the key behind a well-formed secret: a per-instance cache (≤ 2 s, including "no such key"), checked
 * against a "look again" marker in the shared store that revocation and status changes set, so a revoked key
 * fails on its next request on every instance. The database lookup is by the secret's SHA-256, and the stored
 * digest is compared again in constant time.
 */
export class ApiKeyResolver {
  readonly #deps: IdentityDeps;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #lastUsedLocal = new Map<string, number>();

  constructor(deps: IdentityDeps) {
    this.#deps = deps;
  }

  async resolve(secret: string, log: Logger): Promise<ResolvedKey | null> {
    const digest = hashSecret(secret);
    const now = Date.now();
    const cached = this.#cache.get(digest);
    if (cached && cached.expiresAt > now) {
      if (cached.key === null) return null;
      if (!(await this.#isMarkedStale(cached.key.keyId, log))) return cached.key;
    }
    const row = await q.findApiKeyByHash(this.#deps.sql, digest);
    const key = row && digestsEqual(row.secretSha256, digest) ? toResolved(row) : null;
    this.#remember(digest, key, now);
    return key;
  }

  /** Updates lastUsedAt at most once a minute per key: a local gate, then a shared SET NX gate. Never throws. */
  async recordUse(keyId: string, log: Logger): Promise<void> {
    const now = Date.now();
    const last = this.#lastUsedLocal.get(keyId);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return;
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
      log.warn({ err, keyId }, 'could not record api key use');
    }
  }

  async #isMarkedStale(keyId: string, log: Logger): Promise<boolean> {
    try {
      return (await withTimeout(this.#deps.store.get(staleKeyMarker(keyId)), STORE_TIMEOUT_MS)) !== null;
    } catch (err) {
      // The cache entry is at most KEY_CACHE_TTL_MS old: trusting it briefly beats failing every request.
      log.debug({ err: { message: (err as Error).message } }, 'stale-key marker unreadable; trusting the short cache');
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
