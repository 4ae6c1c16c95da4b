import { presentEndReason, type EndReason } from './end-reasons.js';
import { audienceOf, TOMBSTONE_TTL_MS, type VoiceContext } from './context.js';
import type { LiveVoiceSession } from './live-session.js';
import * as q from './queries.js';
import type { VoiceQuotaRequest } from './quota.js';
import type { VoiceTurns } from './turns.js';
import type { VoiceFinal } from './types.js';

/** The end route's answer (also the final answer of a session that already ended). */
export interface EndAnswer {
  sessionId: string;
  status: 'ended' | 'lost';
  endReason: EndReason;
  billableSeconds: number;
  usageFinalized: boolean;
}

const tombstoneKey = (id: string) => `voice:final:${id}`;

export function present(final: VoiceFinal): EndAnswer {
  return {
    sessionId: final.sessionId,
    status: final.status,
    endReason: presentEndReason(final.endReason, audienceOf(final.keyless)),
    billableSeconds: final.billableSeconds,
    usageFinalized: final.usageFinalized,
  };
}

export function finalOfRow(row: q.VoiceSessionRow): VoiceFinal {
  return {
    sessionId: row.id,
    status: row.state === 'lost' ? 'lost' : 'ended',
    endReason: row.endReason,
    billableSeconds: row.billableSeconds,
    usageFinalized: row.usageFinalized,
    keyless: row.source !== 'api',
  };
}

export async function readTombstone(ctx: VoiceContext, id: string): Promise<VoiceFinal | null> {
  const raw = await ctx.deps.store.get(tombstoneKey(id));
  if (raw === null) return null;
  try {
    return JSON.parse(raw) as VoiceFinal;
  } catch {
    return null;
  }
}

async function writeTombstone(ctx: VoiceContext, final: VoiceFinal): Promise<void> {
  await ctx.deps.store.set(tombstoneKey(final.sessionId), JSON.stringify(final), { ttlMs: TOMBSTONE_TTL_MS });
}

/**
 * Tear down an owned session in reverse order of the mint: the gate's end line and the relay first (the caller
 * stops hearing the assistant at once), then the provider (final usage), transcripts, the settlement (exactly once,
 * fenced by the generation), the tombstone, the ownership record.
 */
export async function finishSession(
  ctx: VoiceContext,
  turns: VoiceTurns,
  session: LiveVoiceSession,
  reason: EndReason,
  by: 'client' | 'service',
): Promise<VoiceFinal> {
  const presented = presentEndReason(reason, audienceOf(session.keyless));
  ctx.supervisor.delete(session);
  session.gate.end(presented);
  session.notifyEnded(presented);
  const closed = session.providerClosed ?? (session.provider !== undefined ? await session.provider.close() : undefined);
  const usageSeconds = closed?.usage.seconds ?? session.usageSeconds;
  const billableSeconds = Math.ceil(usageSeconds);
  const usageFinalized = closed?.usageFinal ?? false;
  await turns.drain(session);
  let final: VoiceFinal = { sessionId: session.id, status: 'ended', endReason: reason, billableSeconds, usageFinalized, keyless: session.keyless };
  try {
    const settled = await q.settleSession(ctx.deps.sql, {
      id: session.id,
      generation: session.lease?.record.generation ?? 1,
      state: 'ended',
      endReason: reason,
      endedBy: by,
      usageSeconds,
      billableSeconds,
      usageFinalized,
    });
    if (settled !== undefined) {
      await ctx.quota.settle(session.quotaRequest, billableSeconds, usageFinalized).catch((err: unknown) => session.log.error({ err }, 'voice settlement failed'));
      await writeTombstone(ctx, final).catch((err: unknown) => session.log.error({ err }, 'voice tombstone not written'));
    } else {
      // Someone else settled it (we were fenced: our record expired and another instance declared it lost).
      const row = await q.findSession(ctx.deps.sql, session.id);
      if (row !== undefined) final = finalOfRow(row);
      session.log.warn({ state: row?.state }, 'voice session was settled elsewhere; not settling again');
    }
    if (session.lease !== undefined) await ctx.ownership.release(session.lease).catch(() => undefined);
  } catch (err) {
    session.log.error({ err }, 'voice session settlement failed');
  } finally {
    ctx.sessions.delete(session.id);
  }
  session.log.info({ endReason: reason, billableSeconds, usageFinalized }, 'voice session ended');
  return final;
}

/**
 * Settle a session whose owner is gone, exactly once across the fleet: the row update is conditional on the
 * generation we read (and bumps it, fencing the old owner should it come back); whoever loses the race reads the
 * winner's result. Billed from the last usage the owner persisted; not final (the provider's figure died with it).
 */
export async function settleOrphan(ctx: VoiceContext, row: q.VoiceSessionRow): Promise<VoiceFinal> {
  const billableSeconds = Math.ceil(row.usageSeconds);
  const settled = await q.settleSession(ctx.deps.sql, {
    id: row.id,
    generation: row.ownerGeneration,
    state: 'lost',
    endReason: 'control_lost',
    endedBy: 'reaper',
    usageSeconds: row.usageSeconds,
    billableSeconds,
    usageFinalized: false,
  });
  if (settled === undefined) {
    const now = await q.findSession(ctx.deps.sql, row.id);
    return finalOfRow(now ?? row);
  }
  const final = finalOfRow(settled);
  ctx.deps.log.warn({ voiceSessionId: row.id, ownerInstance: row.ownerInstance }, 'voice session owner gone; settled as lost');
  const request: VoiceQuotaRequest = { accountId: row.accountId, sessionId: row.id, assistantId: row.assistantId, source: row.source, keyless: row.source !== 'api' };
  await ctx.quota.settle(request, billableSeconds, false).catch((err: unknown) => ctx.deps.log.error({ err, voiceSessionId: row.id }, 'voice settlement failed'));
  await writeTombstone(ctx, final);
  return final;
}
