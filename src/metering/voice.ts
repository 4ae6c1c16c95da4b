import { refusalError, type Audience, type Refusal } from './errors.js';
import { newMeteringId } from './ids.js';
import { priceVoiceSeconds } from './prices.js';
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
  source: 'api' | 'widget' | 'playground';
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
  /** Playground voice not counted toward the voice minutes (VOICE_QUOTA_EXEMPT_PLAYGROUND). */
  readonly quotaExempt: boolean;
}

/**
 * Reserves voice seconds for a call. In enforce mode (and not exempt playground): grants up to the requested
 * seconds of what the plan's voice minutes leave this period, refuses with `voice_minutes_exhausted` (owners, 402)
 * when fewer than 30 s are grantable, and on the first grant refuses with `voice_concurrency_limit` (429) when the
 * account already has as many calls holding grants as its plan allows. Visitors get 403 `voice_unavailable` for
 * both. Shadow mode grants the full request and records it; off grants without writing.
 */
export async function reserveVoiceSeconds(meter: Meter, request: VoiceGrantRequest): Promise<VoiceGrant> {
  const requested = Math.max(1, Math.floor(request.requestedSeconds ?? VOICE_GRANT_SECONDS));
  const quotaExempt = meter.config.VOICE_QUOTA_EXEMPT_PLAYGROUND && request.source === 'playground';
  if (meter.mode === 'off')
    return { id: null, accountId: request.accountId, sessionId: request.sessionId, seconds: requested, quotaExempt };
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
      if (!quotaExempt) {
        const limitSeconds = plan.voiceMinutes * 60;
        const grantable = limitSeconds - balance.voiceSecondsUsed - balance.voiceSecondsReserved;
        seconds = Math.min(requested, grantable);
        if (seconds < Math.min(VOICE_MIN_GRANT_SECONDS, requested)) {
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
    }
    await q.insertReservation(tx, {
      id,
      accountId: request.accountId,
      periodStart: locked.period.start,
      kind: 'voice',
      source: request.source,
      assistantId: request.assistantId ?? null,
      voiceSessionId: request.sessionId,
      reservedMicros: 0,
      reservedSeconds: seconds,
      countsAsRequest: false,
      enforced,
      quotaExempt,
      createdAt: meter.clock.now(),
    });
    if (!quotaExempt)
      await q.adjustBalance(tx, request.accountId, locked.period.start, { voiceSecondsReserved: seconds });
    return { seconds };
  });
  if ('refusal' in result) {
    meter.log.info(
      { accountId: request.accountId, refusal: result.refusal.kind, audience: request.audience },
      'voice usage refused',
    );
    throw refusalError(result.refusal, request.audience);
  }
  return { id, accountId: request.accountId, sessionId: request.sessionId, seconds: result.seconds, quotaExempt };
}

/**
 * Records the seconds a grant was actually used (may exceed the grant if the call ran over before it was cut)
 * and frees the rest. Exactly once per grant, like Meter.settle. Voice seconds count toward the voice minutes
 * (or the playground seconds when exempt); their provider cost is recorded in micros on the event and the
 * balance's voice_cost_micros, apart from the chat budget.
 */
export async function settleVoiceSeconds(
  meter: Meter,
  grant: VoiceGrant | string,
  usedSeconds: number,
): Promise<{ status: 'settled' | 'late' | 'duplicate' | 'unmetered'; seconds: number }> {
  const id = typeof grant === 'string' ? grant : grant.id;
  if (id === null || meter.mode === 'off') return { status: 'unmetered', seconds: 0 };
  const seconds = Math.max(0, Math.ceil(usedSeconds));
  const cost = priceVoiceSeconds(seconds);
  const status = await meter.sql.begin(async (tx) => {
    const row = await q.lockReservation(tx, id);
    if (!row || row.kind !== 'voice' || row.status === 'settled' || row.status === 'released')
      return 'duplicate' as const;
    const now = meter.clock.now();
    await q.closeReservation(tx, id, 'settled', now);
    const wasOpen = row.status === 'open';
    await q.adjustBalance(tx, row.accountId, row.periodStart, {
      voiceCostMicros: cost,
      ...(row.quotaExempt
        ? { playgroundVoiceSeconds: seconds }
        : { voiceSecondsUsed: seconds, ...(wasOpen ? { voiceSecondsReserved: -row.reservedSeconds } : {}) }),
    });
    await q.upsertUsageEvent(
      tx,
      meter.eventOf(row, 'settled', now, { units: seconds, costMicros: cost, model: 'voice' }),
    );
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
