import type { VoiceContext } from './context.js';
import type { EndReason } from '../end-reasons.js';
import type { LiveVoiceSession } from './live-session.js';
import { PRESENCE_EVERY_MS } from './ownership.js';
import * as q from '../queries.js';
import { settleOrphan } from './settlement.js';
import { relinquishOrEnd } from './takeover.js';

const ORPHAN_SWEEP_BATCH = 100;

/**
 * The instance's part in the fleet (wall time, because other instances read the records). Three loops, each with its
 * own in-flight guard so none waits behind another (renewal must never wait behind a slow Postgres write):
 *
 * - records (store only): renew the ownership record of every owned session. A store that does not answer leaves
 *   the calls running (the instance reports `degraded`); a record that is gone (the store restarted empty, or it
 *   expired during an outage) is re-asserted under a new generation taken in the database first, so two owners can
 *   never hold one generation; a record someone else changed ends the call (`control_lost`, or what was asked).
 * - liveness (database only): persist liveness and usage of every owned session in one statement fenced by the
 *   generations held (a session settled elsewhere ends here), then retry settlements the database refused.
 * - orphan sweep: settle sessions whose owner died (its record is gone and its liveness stale).
 *
 * Started and stopped by VoiceService (the app lifecycle), never at construction.
 */
export class VoiceFleet {
  private renewTimer: NodeJS.Timeout | undefined;
  private livenessTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private presenceTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  private persisting = false;
  private readonly reasserting = new Set<string>();
  /** The last pass of each loop failed for want of its dependency. */
  private storeFailing = false;
  private databaseFailing = false;

  constructor(
    private readonly ctx: VoiceContext,
    private readonly sweepEveryMs: number,
  ) {}

  /** This instance cannot reach its shared state right now (heartbeats answer `degraded`). */
  get degraded(): boolean {
    return this.storeFailing || this.databaseFailing;
  }

  start(): void {
    const every = this.ctx.ownership.timing.renewEveryMs;
    this.renewTimer ??= setInterval(() => void this.renewAll(), every);
    this.renewTimer.unref();
    this.livenessTimer ??= setInterval(() => void this.persistLiveness(), every);
    this.livenessTimer.unref();
    this.sweepTimer ??= setInterval(() => void this.sweepOrphans(), this.sweepEveryMs);
    this.sweepTimer.unref();
    // Presence: survivors read it to tell a dead owner from a live one (a failed write is retried next tick).
    const announce = () => void this.ctx.ownership.announce().catch(() => undefined);
    if (this.presenceTimer === undefined) announce();
    this.presenceTimer ??= setInterval(announce, PRESENCE_EVERY_MS);
    this.presenceTimer.unref();
  }

  stop(): void {
    for (const timer of [this.renewTimer, this.livenessTimer, this.sweepTimer, this.presenceTimer])
      if (timer !== undefined) clearInterval(timer);
    this.renewTimer = this.livenessTimer = this.sweepTimer = this.presenceTimer = undefined;
  }

  /**
   * Sessions this instance answers for: live ones, ones ending now (the end waits for transcripts and a first
   * settlement attempt, which can outlive the record while the database is away), and ended ones whose settlement is
   * still queued.
   */
  private owned(): LiveVoiceSession[] {
    const { ctx } = this;
    return [...ctx.sessions.values()].filter(
      (s) => s.lease !== undefined && (s.status !== 'ended' || ctx.settling.has(s.id)),
    );
  }

  /** One pass of the records loop (store only). */
  async renewAll(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    const { ctx } = this;
    let failed = false;
    const owned = this.owned();
    try {
      await Promise.all(
        owned.map(async (session) => {
          try {
            const outcome = await ctx.ownership.renew(session.lease);
            if (outcome.kind === 'renewed') return;
            if (outcome.kind === 'missing') {
              void this.reassert(session);
              return;
            }
            const current = outcome.current;
            if (session.status !== 'active') return; // already ending: its settlement is fenced by the generation
            if (
              current.instanceId === ctx.ownership.instanceId &&
              current.generation === session.lease.record.generation &&
              current.endRequested !== undefined
            ) {
              // Another instance asked us to end it (a newer widget session of the same visitor).
              session.lease.record = current;
              session.lease.raw = JSON.stringify(current);
              void session.end(current.endRequested as EndReason);
              return;
            }
            session.log.warn(
              { owner: current.instanceId, generation: current.generation },
              'voice ownership record taken; this instance no longer controls the session',
            );
            void relinquishOrEnd(ctx, session);
          } catch (err) {
            failed = true;
            session.log.debug(
              { err: { message: (err as Error).message } },
              'voice ownership renewal failed; retrying next tick',
            );
          }
        }),
      );
    } finally {
      if (owned.length > 0) {
        if (failed !== this.storeFailing)
          ctx.deps.log.warn(
            { degraded: failed },
            failed ? 'voice ownership renewal failing: shared store unreachable' : 'voice ownership renewal recovered',
          );
        this.storeFailing = failed;
        for (const s of owned) s.timeline.setDegraded('shared_store', failed);
      }
      this.renewing = false;
    }
  }

  /**
   * The record is gone but the call runs here: take the next generation in the database (only while the row is still
   * active, ours, at the generation we hold), then write the record for it. When the database says no, someone
   * settled the call meanwhile: it ends here. When a dependency does not answer, the next tick tries again.
   */
  private async reassert(session: LiveVoiceSession): Promise<void> {
    if (this.reasserting.has(session.id)) return;
    this.reasserting.add(session.id);
    const { ctx } = this;
    try {
      const generation = await q.reassertOwner(
        ctx.deps.sql,
        session.id,
        ctx.ownership.instanceId,
        session.lease.record.generation,
      );
      if (generation === undefined) {
        if (session.status === 'active') {
          session.log.warn('voice session settled elsewhere while its record was gone; ending it here');
          void session.end('control_lost');
        }
        return;
      }
      // The database granted it: from now on settlement and liveness are fenced by this generation.
      session.lease.record = { ...session.lease.record, generation };
      if (await ctx.ownership.reassert(session.lease, generation)) {
        session.log.info({ generation }, 'voice ownership re-asserted');
      }
      // A record appeared meanwhile: the next renewal reads it and decides (ours: adopted; anyone else's: fenced).
    } catch (err) {
      session.log.debug(
        { err: { message: (err as Error).message } },
        'voice ownership re-assertion failed; retrying next tick',
      );
    } finally {
      this.reasserting.delete(session.id);
    }
  }

  /** One pass of the liveness loop (database only): liveness and usage, fenced; then queued settlements. */
  async persistLiveness(): Promise<void> {
    if (this.persisting) return;
    this.persisting = true;
    const { ctx } = this;
    let failed = false;
    const owned = this.owned();
    try {
      const generations = owned.map((s) => s.lease.record.generation);
      try {
        const matched = await q.renewSessions(
          ctx.deps.sql,
          ctx.ownership.instanceId,
          owned.map((s) => s.id),
          owned.map((s) => s.billableUsageSeconds()),
          generations,
        );
        owned.forEach((session, i) => {
          const generation = matched.get(session.id);
          if (generation !== undefined) {
            // A re-assertion of ours committed though its answer was lost: adopt the generation the database holds.
            if (generation > session.lease.record.generation)
              session.lease.record = { ...session.lease.record, generation };
            return;
          }
          // Not matched, and not re-asserted since: settled or taken elsewhere.
          if (session.status !== 'active' || this.reasserting.has(session.id)) return;
          if (session.lease.record.generation !== generations[i]) return;
          session.log.warn('voice session settled elsewhere; this instance no longer controls it');
          void relinquishOrEnd(ctx, session);
        });
      } catch (err) {
        failed = true;
        ctx.deps.log.debug(
          { err: { message: (err as Error).message } },
          'voice liveness not persisted; retrying next tick',
        );
      }
      for (const [id, retry] of [...ctx.settling]) {
        try {
          await retry();
          ctx.settling.delete(id);
          ctx.deps.log.info({ voiceSessionId: id }, 'deferred voice settlement done');
        } catch {
          failed = true;
          break; // the database is still away; the rest wait for the next tick
        }
      }
    } finally {
      // A pass that wrote nothing proved nothing: the flag keeps its last word.
      const tried = owned.length > 0 || failed;
      if (tried && failed !== this.databaseFailing)
        ctx.deps.log.warn(
          { degraded: failed },
          failed ? 'voice liveness failing: database unreachable' : 'voice liveness recovered',
        );
      if (tried) this.databaseFailing = failed;
      for (const s of ctx.sessions.values()) s.timeline.setDegraded('database', this.databaseFailing);
      this.persisting = false;
    }
  }

  /** Settle sessions whose owner stopped renewing and whose record has expired (the owner died). */
  async sweepOrphans(): Promise<number> {
    const { ctx } = this;
    let settled = 0;
    try {
      const stale = await q.findStaleActive(ctx.deps.sql, ctx.ownership.timing.ttlMs, ORPHAN_SWEEP_BATCH);
      for (const row of stale) {
        if (ctx.sessions.has(row.id)) continue;
        if ((await ctx.ownership.read(row.id)) !== null) continue;
        // A WebRTC call goes on without its owner: taken over here rather than settled lost.
        if (await ctx.takeOver(row.id)) continue;
        const final = await settleOrphan(ctx, row);
        if (final.status === 'lost') settled++;
      }
    } catch (err) {
      ctx.deps.log.warn({ err: { message: (err as Error).message } }, 'voice orphan sweep failed');
    }
    return settled;
  }
}
