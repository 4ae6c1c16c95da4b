import { presentEndReason, type EndReason } from '../end-reasons.js';
import { audienceOf, keylessSource, TOMBSTONE_TTL_MS, type VoiceContext } from './context.js';
import { wholeBillableSeconds } from './billable-time.js';
import type { LiveVoiceSession } from './live-session.js';
import * as q from '../queries.js';
import type { VoiceQuotaRequest } from './quota.js';
import { releaseCall } from './teardown.js';
import type { VoiceTurns } from './turns.js';
import type { VoiceFinal } from '../types.js';

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
    keyless: keylessSource(row.source),
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
  releaseCall(ctx, session, 'ending');
  session.gate.end(presented);
  session.notifyEnded(presented);
  const closed =
    session.providerClosed ??
    (session.providerSession !== undefined ? await session.providerSession.close() : undefined);
  const usageSeconds = closed?.usage.seconds ?? session.usageSeconds;
  // Only time with a connected caller and a live provider link is billed.
  const billableSeconds = session.billableSecondsOf(usageSeconds);
  const usageFinalized = closed?.usageFinal ?? false;
  // Transcripts are stored in the background while the database is away; the end does not wait for them.
  await Promise.race([turns.drain(session), new Promise((resolve) => setTimeout(resolve, TURN_DRAIN_WAIT_MS).unref())]);
  const local: VoiceFinal = {
    sessionId: session.id,
    status: 'ended',
    endReason: reason,
    billableSeconds,
    usageFinalized,
    keyless: session.keyless,
  };
  const settlement = new PendingSettlement(ctx, session, local, { reason, by, usageSeconds });
  let final = local;
  try {
    final = await settlement.attempt();
    ctx.sessions.delete(session.id);
  } catch (err) {
    // The database (or the meter) did not answer: the caller gets its final answer from memory now; the settlement is
    // retried by the fleet's liveness loop until it lands, exactly once (fenced by the generation), while this
    // instance keeps the ownership record so nobody settles the call as lost meanwhile.
    queueSettlement(ctx, session, settlement, err);
  }
  session.log.info({ endReason: reason, billableSeconds, usageFinalized }, 'voice session ended');
  return final;
}

/** How long the end waits for the session's last transcript writes before answering. */
const TURN_DRAIN_WAIT_MS = 2000;
/** Settlements waiting for the database, across every session of this instance (memory bound). */
export const MAX_PENDING_SETTLEMENTS = 10_000;

function queueSettlement(
  ctx: VoiceContext,
  session: LiveVoiceSession,
  settlement: PendingSettlement,
  err: unknown,
): void {
  if (ctx.settling.size >= MAX_PENDING_SETTLEMENTS) {
    // Past the bound the row stays active; when this instance stops renewing it, another instance's orphan sweep
    // settles it as lost from the last usage persisted. Never unbounded memory.
    session.log.error(
      { err: { message: (err as Error).message } },
      'voice settlement queue full; the call will be settled as lost',
    );
    ctx.sessions.delete(session.id);
    return;
  }
  session.log.warn(
    { err: { message: (err as Error).message } },
    'voice settlement deferred until the database answers',
  );
  ctx.settling.set(session.id, async () => {
    await settlement.attempt();
    ctx.sessions.delete(session.id);
  });
}

/**
 * The settlement of one owned session, in stages that are each done once whatever the retries: the row (fenced by
 * the generation; a retry whose earlier commit was applied but unanswered recognises its own row), the meter, the
 * tombstone and the ownership record. attempt() rejects while the database does not answer.
 */
class PendingSettlement {
  private row: 'pending' | 'ours' | 'elsewhere' = 'pending';
  private metered = false;
  private final: VoiceFinal;

  constructor(
    private readonly ctx: VoiceContext,
    private readonly session: LiveVoiceSession,
    local: VoiceFinal,
    private readonly end: { reason: EndReason; by: 'client' | 'service'; usageSeconds: number },
  ) {
    this.final = local;
  }

  async attempt(): Promise<VoiceFinal> {
    const { ctx, session } = this;
    if (this.row === 'pending') {
      const instanceId = ctx.ownership.instanceId;
      // Fenced by this instance at the generation held or a later one (a re-assertion of ours that committed though
      // its answer was lost, possibly landing only now): one statement, so no bump can slip between a read and it.
      const settled = await q.settleSession(ctx.deps.sql, {
        id: session.id,
        generation: session.lease?.record.generation ?? 1,
        ownerInstance: instanceId,
        state: 'ended',
        endReason: this.end.reason,
        endedBy: this.end.by,
        usageSeconds: this.end.usageSeconds,
        billableSeconds: this.final.billableSeconds,
        usageFinalized: this.final.usageFinalized,
      });
      if (settled !== undefined) this.row = 'ours';
      else {
        const row = await q.findSession(ctx.deps.sql, session.id);
        if (row?.state === 'active') {
          // Nothing settled it, yet the fenced update matched nothing: never count that as done (the call's usage
          // would be lost). Retried by the liveness loop until the row says who settled it.
          throw new Error('voice settlement matched no row while the session is still active');
        }
        if (row === undefined) {
          // No row: a mint that failed after its provider started never stored the session. Nothing to settle.
          this.row = 'elsewhere';
        } else if (row.state === 'ended' && row.ownerInstance === instanceId && row.endedBy !== 'reaper') {
          // Our own earlier attempt committed (its statement ran after its deadline, or its answer was lost): only
          // this instance's settlement ends a row it owns without the reaper.
          this.row = 'ours';
        } else {
          // Someone else settled it (we were fenced: our record expired and another instance declared it lost).
          this.row = 'elsewhere';
          this.final = finalOfRow(row);
          session.log.warn({ state: row.state }, 'voice session was settled elsewhere; not settling again');
        }
      }
    }
    if (this.row === 'ours' && !this.metered) {
      await ctx.quota.settle(session.quotaRequest, this.final.billableSeconds, this.final.usageFinalized);
      this.metered = true;
      await writeTombstone(ctx, this.final).catch((err: unknown) =>
        session.log.warn({ err: { message: (err as Error).message } }, 'voice tombstone not written'),
      );
    }
    if (session.lease !== undefined) await ctx.ownership.release(session.lease).catch(() => undefined);
    return this.final;
  }
}

/**
 * Settle a session whose owner is gone, exactly once across the fleet: the row update is conditional on the
 * generation we read (and bumps it, fencing the old owner should it come back); whoever loses the race reads the
 * winner's result. Billed from the last usage the owner persisted; not final (the provider's figure died with it).
 */
export async function settleOrphan(ctx: VoiceContext, row: q.VoiceSessionRow): Promise<VoiceFinal> {
  const billableSeconds = wholeBillableSeconds(row.usageSeconds);
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
  ctx.deps.log.warn(
    { voiceSessionId: row.id, ownerInstance: row.ownerInstance },
    'voice session owner gone; settled as lost',
  );
  ctx.observer?.sessionEnded('control_lost', 0);
  const request: VoiceQuotaRequest = {
    accountId: row.accountId,
    sessionId: row.id,
    assistantId: row.assistantId,
    source: row.source,
    keyless: keylessSource(row.source),
  };
  // The row says lost now, so no sweep finds the call again: a usage settlement the database refused is retried by
  // the fleet's liveness loop until it lands (until then the grant stays open: the plan's concurrent calls count it,
  // and voice.session.ended waits for it).
  const settleUsage = () => ctx.quota.settle(request, billableSeconds, false);
  await settleUsage().catch((err: unknown) => {
    if (ctx.settling.size >= MAX_PENDING_SETTLEMENTS) {
      ctx.deps.log.error({ err, voiceSessionId: row.id }, 'voice settlement failed; the queue is full');
      return;
    }
    ctx.deps.log.warn(
      { err: { message: (err as Error).message }, voiceSessionId: row.id },
      'voice settlement of a lost call deferred until the database answers',
    );
    ctx.settling.set(row.id, settleUsage);
  });
  await writeTombstone(ctx, final);
  return final;
}
