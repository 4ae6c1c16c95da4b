import type { VoiceContext } from './context.js';
import type { EndReason } from './end-reasons.js';
import * as q from './queries.js';
import { settleOrphan } from './settlement.js';

const ORPHAN_SWEEP_BATCH = 100;

/**
 * The instance's part in the fleet (wall time, because other instances read the records): one loop renews the
 * ownership record of every owned session, another settles sessions whose owner died. Started and stopped by
 * VoiceService (the app lifecycle), never at construction.
 */
export class VoiceFleet {
  private renewTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private renewing = false;

  constructor(
    private readonly ctx: VoiceContext,
    private readonly sweepEveryMs: number,
  ) {}

  start(): void {
    this.renewTimer ??= setInterval(() => void this.renewAll(), this.ctx.ownership.timing.renewEveryMs);
    this.renewTimer.unref();
    this.sweepTimer ??= setInterval(() => void this.sweepOrphans(), this.sweepEveryMs);
    this.sweepTimer.unref();
  }

  stop(): void {
    if (this.renewTimer !== undefined) clearInterval(this.renewTimer);
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.renewTimer = this.sweepTimer = undefined;
  }

  /** One pass for every owned session: renew records (fenced ones stop), then persist liveness and usage once. */
  async renewAll(): Promise<void> {
    if (this.renewing) return;
    this.renewing = true;
    const { ctx } = this;
    try {
      const owned = [...ctx.sessions.values()].filter((s) => s.status === 'active' && s.lease !== undefined);
      await Promise.all(
        owned.map(async (session) => {
          try {
            const outcome = await ctx.ownership.renew(session.lease);
            if (outcome.kind === 'renewed') return;
            const current = outcome.current;
            if (current !== null && current.instanceId === ctx.ownership.instanceId && current.generation === session.lease.record.generation && current.endRequested !== undefined) {
              // Another instance asked us to end it (a newer widget session of the same visitor).
              session.lease.record = current;
              session.lease.raw = JSON.stringify(current);
              void session.end(current.endRequested as EndReason);
              return;
            }
            session.log.warn('voice ownership record lost; this instance no longer controls the session');
            void session.end('control_lost');
          } catch (err) {
            session.log.warn({ err }, 'voice ownership renewal failed; retrying next tick');
          }
        }),
      );
      const active = owned.filter((s) => s.status === 'active');
      await q.renewSessions(ctx.deps.sql, active.map((s) => s.id), active.map((s) => s.usageSeconds));
    } catch (err) {
      ctx.deps.log.warn({ err }, 'voice session renewal pass failed');
    } finally {
      this.renewing = false;
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
        const final = await settleOrphan(ctx, row);
        if (final.status === 'lost') settled++;
      }
    } catch (err) {
      ctx.deps.log.warn({ err }, 'voice orphan sweep failed');
    }
    return settled;
  }
}
