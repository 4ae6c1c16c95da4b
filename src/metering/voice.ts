import { refusalError, type Audience, type Refusal } from './errors.js';
import { newMeteringId } from './ids.js';
import { limitMicrosOf } from './plans.js';
import { snapshot } from './report.js';
import { readAlertState } from './budget.js';
import * as q from './queries.js';
import type { Meter } from './service.js';

/** Voice minutes are handed out in grants of this many seconds (docs/design-decisions.md, Voice). */
export const VOICE_GRANT_SECONDS = 300;
/** A mint (or a renewal) with fewer grantable seconds than this is refused. */
export const VOICE_MIN_GRANT_SECONDS = 30;

export interface VoiceGrantRequest {
  accountId: string;
  /** The voice session the grant belongs to; concurrency counts distinct sessions holding an open grant. */
  sessionId: string;
  source: 'api' | 'widget' | 'playground' | 'phone' | 'test';
  audience: Audience;
  assistantId?: string | null;
  /** True for the mint (checks the plan's concurrent-call limit); false for a renewal of a running call. */
  first: boolean;
  /** Default {@link VOICE_GRANT_SECONDS}. */
  requestedSeconds?: number;
}

/** Seconds a running call may use before it must settle this grant and ask for the next. */
export interface VoiceGrant {
  /** Null when metering is off. */
  readonly id: string | null;
  readonly accountId: string;
  readonly sessionId: string;
  readonly seconds: number;
  /** Not counted toward the voice minutes: playground voice (VOICE_QUOTA_EXEMPT_PLAYGROUND) and scenario runs. */
  readonly quotaExempt: boolean;
  /** Not bounded by the budget either (exempt playground voice only; scenario runs are inside the budget). */
  readonly budgetExempt: boolean;
}

/**
 * What a call of this source is exempt from. Owner playground voice (VOICE_QUOTA_EXEMPT_PLAYGROUND) is outside both
 * the voice minutes and the budget (like exempt playground chat); scenario runs (source `test`) never use the
 * voice minutes (counted as playground seconds) but their seconds are money inside the budget like any other call.
 */
export function voiceExemptions(
  config: Pick<Meter['config'], 'VOICE_QUOTA_EXEMPT_PLAYGROUND'>,
  source: VoiceGrantRequest['source'],
): { quotaExempt: boolean; budgetExempt: boolean } {
  const playground = config.VOICE_QUOTA_EXEMPT_PLAYGROUND && source === 'playground';
  return { quotaExempt: playground || source === 'test', budgetExempt: playground };
}

/**
 * Reserves voice seconds for a call. In enforce mode: grants up to the requested seconds of what the plan's voice
 * minutes (unless exempt, {@link voiceExemptions}) and the budget (unless exempt playground) leave this period,
 * refuses with `voice_minutes_exhausted` or `usage_limit` (owners, 402) when fewer than 30 s are grantable, and on
 * the first grant refuses with `voice_concurrency_limit` (429) when the
 * account already has as many calls holding grants as its plan allows. Visitors get 403 `voice_unavailable` for
 * both. Shadow mode grants the full request and records it; off grants without writing.
 */
export async function reserveVoiceSeconds(meter: Meter, request: VoiceGrantRequest): Promise<VoiceGrant> {
  const requested = Math.max(1, Math.floor(request.requestedSeconds ?? VOICE_GRANT_SECONDS));
  const { quotaExempt, budgetExempt } = voiceExemptions(meter.config, request.source);
  const grant = { accountId: request.accountId, sessionId: request.sessionId, quotaExempt, budgetExempt };
  if (meter.mode === 'off') return { id: null, ...grant, seconds: requested };
  const enforced = meter.mode === 'enforce';
  const id = newMeteringId('ures');
  const result = await meter.sql.begin(async (tx): Promise<{ refusal: Refusal } | { seconds: number }> => {
    const locked = await meter.lock(tx, request.accountId);
    const { balance, plan } = locked;
    let seconds = requested;
    if (enforced) {
      if (request.first) {
        const active = await q.countActiveVoiceSessions(tx, request.accountId, request.sessionId);
        if (active >= plan.voiceConcurrentCalls)
          return { refusal: { kind: 'voice_concurrency', voiceConcurrentCalls: plan.voiceConcurrentCalls } };
      }
      const limitSeconds = plan.voiceMinutes * 60;
      const grantable = quotaExempt ? Infinity : limitSeconds - balance.voiceSecondsUsed - balance.voiceSecondsReserved;
      // The call's seconds are money too: a grant holds their price against the effective budget, like a chat
      // reservation, so the budget (with the owner's hard limit) bounds a call as it bounds everything else.
      const limitMicros = limitMicrosOf(
        plan,
        locked.account.limitOverrideMicros,
        balance.creditMicros,
        locked.account.budgetHardLimitMicros,
      );
      // Seconds that cost nothing (the local voice) are not bounded by the budget.
      const affordable =
        budgetExempt || meter.voiceSecondMicros === 0
          ? Infinity
          : Math.floor(
              Math.max(0, limitMicros - balance.consumedMicros - balance.reservedMicros) / meter.voiceSecondMicros,
            );
      seconds = Math.min(requested, grantable, affordable);
      const minimum = Math.min(VOICE_MIN_GRANT_SECONDS, requested);
      if (seconds < minimum && affordable < minimum && affordable < grantable) {
        return {
          refusal: {
            kind: 'budget',
            limitMicros,
            consumedMicros: balance.consumedMicros,
            reservedMicros: balance.reservedMicros,
            requestedMicros: meter.priceVoiceSeconds(minimum),
          },
        };
      }
      if (seconds < minimum) {
        return {
          refusal: {
            kind: 'voice_minutes',
            voiceSecondsLimit: limitSeconds,
            voiceSecondsUsed: balance.voiceSecondsUsed,
            voiceSecondsReserved: balance.voiceSecondsReserved,
          },
        };
      }
    }
    // The reservation and the balance it moves go in one round trip (pipelined, in order), under the account's lock.
    const reserving = q.insertReservation(tx, {
      id,
      accountId: request.accountId,
      periodStart: locked.period.start,
      kind: 'voice',
      source: request.source,
      assistantId: request.assistantId ?? null,
      voiceSessionId: request.sessionId,
      reservedMicros: meter.priceVoiceSeconds(seconds),
      reservedSeconds: seconds,
      countsAsRequest: false,
      enforced,
      quotaExempt,
      createdAt: meter.clock.now(),
    });
    const adjusting = q.adjustBalance(tx, request.accountId, locked.period.start, {
      reservedMicros: meter.priceVoiceSeconds(seconds),
      ...(quotaExempt ? {} : { voiceSecondsReserved: seconds }),
    });
    await Promise.all([reserving, adjusting]);
    return { seconds };
  });
  if ('refusal' in result) {
    meter.log.info(
      { accountId: request.accountId, refusal: result.refusal.kind, audience: request.audience },
      'voice usage refused',
    );
    throw refusalError(result.refusal, request.audience, 'voice');
  }
  return { id, ...grant, seconds: result.seconds };
}

/**
 * Records the seconds a grant was actually used (may exceed the grant if the call ran over before it was cut)
 * and frees the rest. Exactly once per grant, like Meter.settle. Voice seconds count toward the voice minutes
 * (or the playground seconds when exempt); their cost is spend like any other (the balance's consumed micros, the
 * usage event, the budget alerts), and the balance's voice_cost_micros keeps voice's share of it.
 */
export async function settleVoiceSeconds(
  meter: Meter,
  grant: VoiceGrant | string,
  usedSeconds: number,
): Promise<{ status: 'settled' | 'late' | 'duplicate' | 'unmetered'; seconds: number }> {
  const id = typeof grant === 'string' ? grant : grant.id;
  if (id === null || meter.mode === 'off') return { status: 'unmetered', seconds: 0 };
  const seconds = Math.max(0, Math.ceil(usedSeconds));
  const cost = meter.priceVoiceSeconds(seconds);
  const status = await meter.sql.begin(async (tx) => {
    const row = await q.lockReservation(tx, id);
    if (!row || row.kind !== 'voice' || row.status === 'settled' || row.status === 'released')
      return 'duplicate' as const;
    const now = meter.clock.now();
    await q.closeReservation(tx, id, 'settled', now);
    const wasOpen = row.status === 'open';
    const [, alertState] = await Promise.all([
      q.adjustBalance(tx, row.accountId, row.periodStart, {
        voiceCostMicros: cost,
        consumedMicros: cost,
        ...(wasOpen ? { reservedMicros: -row.reservedMicros } : {}),
        ...(row.quotaExempt
          ? { playgroundVoiceSeconds: seconds }
          : { voiceSecondsUsed: seconds, ...(wasOpen ? { voiceSecondsReserved: -row.reservedSeconds } : {}) }),
      }),
      cost > 0 ? readAlertState(tx, row.accountId, row.periodStart) : undefined,
    ]);
    await q.upsertUsageEvent(
      tx,
      meter.eventOf(row, 'settled', now, { units: seconds, costMicros: cost, model: 'voice' }),
    );
    if (alertState) await meter.budgetAlerts(tx, row.accountId, row.periodStart, alertState);
    return wasOpen ? ('settled' as const) : ('late' as const);
  });
  return { status, seconds: status === 'duplicate' ? 0 : seconds };
}

/** The voice grants of one session, oldest first: what an instance that did not hold the call needs to settle it. */
export async function listVoiceGrants(
  meter: Meter,
  sessionId: string,
): Promise<Array<{ id: string; status: 'open' | 'settled' | 'released' | 'expired'; seconds: number }>> {
  if (meter.mode === 'off') return [];
  const rows = await q.listVoiceReservations(meter.sql, sessionId);
  return rows.map((r) => ({ id: r.id, status: r.status, seconds: r.reservedSeconds }));
}

/**
 * Whether a running call may go on under the money budget (the hard stop): false once the period's spend plus the
 * seconds this call used and has not settled yet reach the effective budget, for instance after the owner lowered
 * the hard limit or other spend used it up. Enforce mode only; exempt playground calls are never cut for money (scenario
 * calls are: they are inside the budget).
 * One indexed read; the voice supervisor polls it with the grant check.
 */
export async function voiceBudgetAllows(
  meter: Meter,
  grant: Pick<VoiceGrant, 'accountId' | 'budgetExempt'>,
  unsettledSeconds: number,
): Promise<boolean> {
  if (meter.mode !== 'enforce' || grant.budgetExempt) return true;
  const { account, balance, plan } = await snapshot(meter, grant.accountId);
  const limitMicros = limitMicrosOf(
    plan,
    account.limitOverrideMicros,
    balance.creditMicros,
    account.budgetHardLimitMicros,
  );
  return balance.consumedMicros + meter.priceVoiceSeconds(Math.max(0, unsettledSeconds)) < limitMicros;
}

/**
 * Whether the account could start one more call now, before anything is asked of a carrier (a call Parley places):
 * the plan's concurrent calls (those holding a grant plus `pendingCalls` not yet answered), at least 30 grantable
 * voice seconds, and a budget that covers them. Throws the owner's refusal (402 / 429), as a mint would; enforce
 * mode only.
 */
export async function precheckVoiceCall(meter: Meter, accountId: string, pendingCalls: number): Promise<void> {
  if (meter.mode !== 'enforce') return;
  const { account, balance, plan } = await snapshot(meter, accountId);
  let refusal: Refusal | undefined;
  const active = await q.countActiveVoiceSessions(meter.sql, accountId, '');
  const limitMicros = limitMicrosOf(
    plan,
    account.limitOverrideMicros,
    balance.creditMicros,
    account.budgetHardLimitMicros,
  );
  const grantable = plan.voiceMinutes * 60 - balance.voiceSecondsUsed - balance.voiceSecondsReserved;
  const affordable =
    meter.voiceSecondMicros === 0
      ? Infinity
      : Math.floor(
          Math.max(0, limitMicros - balance.consumedMicros - balance.reservedMicros) / meter.voiceSecondMicros,
        );
  if (active + pendingCalls >= plan.voiceConcurrentCalls)
    refusal = { kind: 'voice_concurrency', voiceConcurrentCalls: plan.voiceConcurrentCalls };
  else if (affordable < VOICE_MIN_GRANT_SECONDS && affordable < grantable)
    refusal = {
      kind: 'budget',
      limitMicros,
      consumedMicros: balance.consumedMicros,
      reservedMicros: balance.reservedMicros,
      requestedMicros: meter.priceVoiceSeconds(VOICE_MIN_GRANT_SECONDS),
    };
  else if (grantable < VOICE_MIN_GRANT_SECONDS)
    refusal = {
      kind: 'voice_minutes',
      voiceSecondsLimit: plan.voiceMinutes * 60,
      voiceSecondsUsed: balance.voiceSecondsUsed,
      voiceSecondsReserved: balance.voiceSecondsReserved,
    };
  if (refusal !== undefined) throw refusalError(refusal, 'owner', 'voice');
}
