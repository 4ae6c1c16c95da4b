import type { SharedStore } from '../../store/types.js';

/**
 * Ownership records (docs/house-rules.md: ownership carries a generation that state-changing work checks). Every live session has one store record
 * `voice:owner:<sessionId>` = `{instanceId, generation, expiresAt}` that its owner renews every 5 s and that expires
 * 15 s after the last renewal. Any instance reads it to answer 421 `misrouted` (the record names the owner, so a
 * proxy can route by it) or, once it is gone, to conclude that the owner died.
 *
 * Fencing: renewals are compare-and-set against the exact value the owner last wrote, so an owner whose record
 * changed (expired, taken over, marked for ending) learns it on its next renewal and stops acting. The generation
 * travels to the voice_sessions row too; settlement there is conditional on it, so a stale owner cannot settle a
 * session someone else already settled (Redis can lose writes; the database is the referee).
 */
export interface OwnerRecord {
  instanceId: string;
  generation: number;
  /** Epoch ms after which the record is gone unless renewed. */
  expiresAt: number;
  /**
   * Set by another instance that needs the owner to end the session (a newer widget session of the same
   * visitor: `superseded`). The owner sees it when its next renewal fails and ends the session itself.
   */
  endRequested?: string;
}

/** What the owner holds: the exact value it wrote last (the CAS expectation). */
export interface OwnerLease {
  readonly sessionId: string;
  record: OwnerRecord;
  raw: string;
}

export type RenewOutcome =
  | { kind: 'renewed' }
  /**
   * The record is gone (expired during a store outage, or the store restarted empty). The owner may re-assert it
   * only after fencing in the database (a new generation), never by rewriting it blindly.
   */
  | { kind: 'missing' }
  /** The record changed under us: `current` is what is there now. The owner must stop acting. */
  | { kind: 'fenced'; current: OwnerRecord };

export interface OwnershipTiming {
  /** Renewal period (default 5 s). */
  renewEveryMs: number;
  /** Expiry after the last renewal (default 15 s). */
  ttlMs: number;
}

export const OWNERSHIP_DEFAULTS: Readonly<OwnershipTiming> = Object.freeze({ renewEveryMs: 5000, ttlMs: 15_000 });

const ownerKey = (sessionId: string) => `voice:owner:${sessionId}`;
const presenceKey = (instanceId: string) => `voice:instance:${instanceId}`;

/**
 * Instance presence: every instance rewrites `voice:instance:<id>` each PRESENCE_EVERY_MS with a PRESENCE_TTL_MS
 * expiry. When it is gone while a session's record still names that instance, the owner died (killed, host lost):
 * any survivor answers `lost` for its calls at once instead of 421 naming a dead instance until the record expires.
 * One write per instance per second, whatever the number of calls.
 */
export const PRESENCE_EVERY_MS = 1000;
export const PRESENCE_TTL_MS = 3000;

export function parseOwnerRecord(raw: string | null): OwnerRecord | null {
  if (raw === null) return null;
  try {
    const value = JSON.parse(raw) as Partial<OwnerRecord>;
    if (
      typeof value.instanceId !== 'string' ||
      typeof value.generation !== 'number' ||
      typeof value.expiresAt !== 'number'
    )
      return null;
    return value as OwnerRecord;
  } catch {
    return null;
  }
}

export class VoiceOwnership {
  constructor(
    private readonly store: SharedStore,
    readonly instanceId: string,
    readonly timing: OwnershipTiming = OWNERSHIP_DEFAULTS,
    /** Wall clock: records are read by other instances, so they carry real time, never a test clock. */
    private readonly now: () => number = Date.now,
  ) {}

  /** Take a new session (generation 1). Null when a record already exists (an id collision: never reuse it). */
  async claim(sessionId: string, generation = 1): Promise<OwnerLease | null> {
    const record: OwnerRecord = { instanceId: this.instanceId, generation, expiresAt: this.now() + this.timing.ttlMs };
    const raw = JSON.stringify(record);
    const ok = await this.store.set(ownerKey(sessionId), raw, { ttlMs: this.timing.ttlMs, onlyIfAbsent: true });
    return ok ? { sessionId, record, raw } : null;
  }

  /**
   * Extend the lease; fenced when the record is no longer this owner's. A record that is still ours (same instance
   * and generation, nobody asked to end it) but not byte-equal to what we hold is adopted and renewed: an earlier
   * renewal was applied by the store while its reply was lost (a deadline during a stall), which is not a takeover.
   * Rejects when the store does not answer: the caller keeps the session and retries.
   */
  async renew(lease: OwnerLease): Promise<RenewOutcome> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const record: OwnerRecord = { ...lease.record, expiresAt: this.now() + this.timing.ttlMs };
      const raw = JSON.stringify(record);
      if (await this.store.compareAndSet(ownerKey(lease.sessionId), lease.raw, raw, this.timing.ttlMs)) {
        lease.record = record;
        lease.raw = raw;
        return { kind: 'renewed' };
      }
      const currentRaw = await this.store.get(ownerKey(lease.sessionId));
      const current = parseOwnerRecord(currentRaw);
      if (currentRaw === null || current === null) return { kind: 'missing' };
      const ours = current.instanceId === this.instanceId && current.generation === lease.record.generation;
      if (!ours || current.endRequested !== undefined) return { kind: 'fenced', current };
      lease.record = current;
      lease.raw = currentRaw;
    }
    return { kind: 'missing' };
  }

  /**
   * Write the record again for a generation the database has just granted this owner (see reassertOwner in
   * queries.ts). Only when no record exists: anything there now is someone else's word and wins.
   */
  async reassert(lease: OwnerLease, generation: number): Promise<boolean> {
    const record: OwnerRecord = { instanceId: this.instanceId, generation, expiresAt: this.now() + this.timing.ttlMs };
    const raw = JSON.stringify(record);
    if (!(await this.store.set(ownerKey(lease.sessionId), raw, { ttlMs: this.timing.ttlMs, onlyIfAbsent: true })))
      return false;
    lease.record = record;
    lease.raw = raw;
    return true;
  }

  /**
   * Write the record for a call this instance has just taken over at `generation` (granted by the database, see
   * takeOverSession in queries.ts): whatever the record says now (a dead owner's, or nothing) is replaced.
   */
  async seize(sessionId: string, generation: number): Promise<OwnerLease> {
    const record: OwnerRecord = { instanceId: this.instanceId, generation, expiresAt: this.now() + this.timing.ttlMs };
    const raw = JSON.stringify(record);
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await this.store.get(ownerKey(sessionId));
      if (await this.store.compareAndSet(ownerKey(sessionId), current, raw, this.timing.ttlMs)) break;
    }
    return { sessionId, record, raw };
  }

  /** Say this instance is alive (PRESENCE_TTL_MS). */
  async announce(): Promise<void> {
    await this.store.set(presenceKey(this.instanceId), String(this.now()), { ttlMs: PRESENCE_TTL_MS });
  }

  /**
   * Whether the instance a record names is alive. This instance always is; another one is when its presence key is
   * there. Only asked about requests that reached a non-owner (the proxy sends a session's requests to its owner while
   * that answers), so a false "gone" needs an owner that is alive yet could not write to the store for PRESENCE_TTL_MS;
   * its calls are then settled `lost` here, and the owner, fenced by the generation, ends them `control_lost`.
   */
  async ownerAlive(record: OwnerRecord): Promise<boolean> {
    if (record.instanceId === this.instanceId) return true;
    return (await this.store.get(presenceKey(record.instanceId))) !== null;
  }

  async read(sessionId: string): Promise<OwnerRecord | null> {
    return parseOwnerRecord(await this.store.get(ownerKey(sessionId)));
  }

  /** Give the record up (session ended here). Only removes it while it is still ours. */
  async release(lease: OwnerLease): Promise<void> {
    await this.store.deleteIfEquals(ownerKey(lease.sessionId), lease.raw);
  }

  /**
   * Ask the owner (any instance) to end a session with `reason`: the record is rewritten with `endRequested`, which
   * fences the owner's next renewal. Returns the record asked, or null when there is no live owner.
   */
  async requestEnd(sessionId: string, reason: string): Promise<OwnerRecord | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const raw = await this.store.get(ownerKey(sessionId));
      const current = parseOwnerRecord(raw);
      if (raw === null || current === null) return null;
      if (current.endRequested !== undefined) return current;
      const ttl = Math.max(1, current.expiresAt - this.now());
      const next: OwnerRecord = { ...current, endRequested: reason };
      if (await this.store.compareAndSet(ownerKey(sessionId), raw, JSON.stringify(next), ttl)) return next;
    }
    return null;
  }
}
