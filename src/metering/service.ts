import type { Config } from '../config/index.js';
import type { Sql, TransactionSql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import { lockAccountPeriod, type LockedAccount } from './account-period.js';
import { applyBudgetAlerts, readAlertState, type ThresholdSink } from './budget.js';
import { refusalError, type Audience, type Refusal } from './errors.js';
import { newMeteringId } from './ids.js';
import { systemClock, type Clock } from './periods.js';
import { limitMicrosOf } from './plans.js';
import {
  estimateChat,
  INGESTION_CHUNK_MICROS,
  priceChat,
  priceIngestion,
  priceVoiceSeconds,
  VOICE_SECOND_MICROS,
} from './prices.js';
import * as q from './queries.js';

/** The settings the meter reads (all from Config). */
export type MeterConfig = Pick<
  Config,
  | 'HOSTED_USAGE_ENFORCEMENT'
  | 'HOSTED_USAGE_DEFAULT_LIMIT_MICROS'
  | 'HOSTED_USAGE_MAX_OUTPUT_TOKENS'
  | 'HOSTED_USAGE_RECONCILE_STALE_MINUTES'
  | 'HOSTED_USAGE_EXEMPT_PLAYGROUND'
  | 'VOICE_QUOTA_EXEMPT_PLAYGROUND'
>;

export type EnforcementMode = MeterConfig['HOSTED_USAGE_ENFORCEMENT'];
export type UsageSource = q.UsageSource;

export interface MeterDeps {
  sql: Sql;
  config: Readonly<MeterConfig>;
  log: Logger;
  clock?: Clock;
  /** Each budget threshold crossing, once, inside the transaction recording it (default: nothing). */
  onThresholdCrossed?: ThresholdSink;
  /**
   * What a second of a call costs this installation (default VOICE_SECOND_MICROS, a hosted realtime model's price).
   * 0 for the local voice, which runs on this machine: usage shows what really costs money.
   */
  voiceSecondMicros?: number;
  /** What a stored document chunk costs (default INGESTION_CHUNK_MICROS: 0, nothing hosted is used to ingest). */
  ingestionChunkMicros?: number;
}

/** What a metered request asks for before its provider call. */
export interface AdmitRequest {
  accountId: string;
  kind: 'chat' | 'ingestion' | 'eval';
  /** api (bearer key), widget (keyless visitor), playground (owner's dashboard playground), dashboard, system. */
  source: UsageSource;
  /** Who sees a refusal: owners get reason + limit, visitors a neutral 403. */
  audience: Audience;
  /** Estimated cost in micros (chat: {@link Meter.estimateChat}); reserved against the budget in enforce mode. */
  estimateMicros: number;
  /** Counts toward the monthly request cap. Default: true for chat, false otherwise (docs/design-decisions.md, Usage and plans). */
  countsAsRequest?: boolean;
  assistantId?: string | null;
  /** The chat conversation this turn belongs to (cost per conversation is read from the ledger). */
  conversationId?: string | null;
}

/** A held reservation. Pass it to settle() once the provider answered, or release() if it was never called. */
export interface Reservation {
  /** Null when metering is off: settle and release are then no-ops. */
  readonly id: string | null;
  readonly accountId: string;
  readonly kind: q.UsageKind;
  readonly reservedMicros: number;
  /** Checked against the limits (enforce mode and not exempt). */
  readonly enforced: boolean;
  readonly countsAsRequest: boolean;
}

/** The actual usage of a settled request. Give actualMicros, or model + tokens (priced from the catalog). */
export interface SettleUsage {
  actualMicros?: number;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** Ingestion chunks, voice seconds. */
  units?: number;
}

/**
 * settled: this call recorded the usage; late: recorded after the sweeper had expired the reservation;
 * duplicate: already settled or released (nothing changed); unmetered: metering is off.
 */
export type SettleOutcome = { status: 'settled' | 'late' | 'duplicate' | 'unmetered'; costMicros: number };

/**
 * The meter: every provider dollar reserved before the call, settled after it, exactly once.
 *
 * Modes (HOSTED_USAGE_ENFORCEMENT): `off` writes nothing; `shadow` records reservations, events and spend and never
 * refuses; `enforce` refuses when the reservation, the request cap or the plan would be exceeded. Admission is one
 * transaction that locks the period balance (SELECT ... FOR UPDATE), so concurrent requests cannot overspend:
 * spend exceeds the limit by at most what one request costs beyond its estimate.
 */
export class Meter {
  readonly mode: EnforcementMode;
  readonly clock: Clock;
  readonly sql: Sql;
  readonly config: Readonly<MeterConfig>;
  readonly log: Logger;
  readonly onThresholdCrossed: ThresholdSink | undefined;
  readonly voiceSecondMicros: number;
  readonly ingestionChunkMicros: number;

  constructor(deps: MeterDeps) {
    this.voiceSecondMicros = deps.voiceSecondMicros ?? VOICE_SECOND_MICROS;
    this.ingestionChunkMicros = deps.ingestionChunkMicros ?? INGESTION_CHUNK_MICROS;
    this.onThresholdCrossed = deps.onThresholdCrossed;
    this.sql = deps.sql;
    this.config = deps.config;
    this.log = deps.log;
    this.clock = deps.clock ?? systemClock;
    this.mode = deps.config.HOSTED_USAGE_ENFORCEMENT;
  }

  get metering(): boolean {
    return this.mode !== 'off';
  }

  /** Chat reservation size: input tokens priced exactly, output at HOSTED_USAGE_MAX_OUTPUT_TOKENS. */
  estimateChat(model: string, inputTokens: number): number {
    return estimateChat(model, inputTokens, this.config.HOSTED_USAGE_MAX_OUTPUT_TOKENS);
  }

  /** The output-token ceiling chat should pass to the provider, so actual cost stays within the estimate. */
  get maxOutputTokens(): number {
    return this.config.HOSTED_USAGE_MAX_OUTPUT_TOKENS;
  }

  priceChat(model: string, inputTokens: number, outputTokens: number): number {
    return priceChat(model, inputTokens, outputTokens);
  }

  /** Cost of storing `chunks` chunks of a document (0: ingestion runs on this machine). */
  priceIngestion(chunks: number): number {
    return priceIngestion(chunks, this.ingestionChunkMicros);
  }

  /** Cost of `seconds` of a call on this installation's voice provider (0 for the local voice). */
  priceVoiceSeconds(seconds: number): number {
    return priceVoiceSeconds(seconds, this.voiceSecondMicros);
  }

  /**
   * Reserves `estimateMicros` for one request. In enforce mode throws the audience-shaped AppError when the budget,
   * the request cap or the plan (evals) would be exceeded; in shadow mode records and never throws (except for a
   * database failure); in off mode returns an unmetered reservation without touching the database.
   */
  async admit(request: AdmitRequest): Promise<Reservation> {
    const countsDefault = request.kind === 'chat';
    const exemptPlayground =
      this.config.HOSTED_USAGE_EXEMPT_PLAYGROUND && request.source === 'playground' && request.kind === 'chat';
    // Exempt playground chat is still metered (spend recorded) but neither limited nor counted as a request.
    const countsAsRequest = exemptPlayground ? false : (request.countsAsRequest ?? countsDefault);
    const enforced = this.mode === 'enforce' && !exemptPlayground;
    const estimate = Math.max(0, Math.ceil(request.estimateMicros));
    if (this.mode === 'off') {
      return {
        id: null,
        accountId: request.accountId,
        kind: request.kind,
        reservedMicros: 0,
        enforced: false,
        countsAsRequest: false,
      };
    }
    const id = newMeteringId('ures');
    const refusal = await this.sql.begin(async (tx) => {
      const locked = await this.lock(tx, request.accountId);
      if (enforced) {
        const refused = admissionRefusal(locked, { kind: request.kind, estimate, countsAsRequest });
        if (refused) return refused;
      }
      // One round trip for both (pipelined, in order) while the account's lock is held.
      const reserving = q.insertReservation(tx, {
        id,
        accountId: request.accountId,
        periodStart: locked.period.start,
        kind: request.kind,
        source: request.source,
        assistantId: request.assistantId ?? null,
        conversationId: request.conversationId ?? null,
        voiceSessionId: null,
        reservedMicros: estimate,
        reservedSeconds: 0,
        countsAsRequest,
        enforced,
        quotaExempt: exemptPlayground,
        createdAt: this.clock.now(),
      });
      const adjusting = q.adjustBalance(tx, request.accountId, locked.period.start, {
        reservedMicros: estimate,
        requestCount: countsAsRequest ? 1 : 0,
      });
      await Promise.all([reserving, adjusting]);
      return undefined;
    });
    if (refusal) {
      this.log.info(
        { accountId: request.accountId, kind: request.kind, refusal: refusal.kind, audience: request.audience },
        'usage refused',
      );
      throw refusalError(refusal, request.audience);
    }
    return {
      id,
      accountId: request.accountId,
      kind: request.kind,
      reservedMicros: estimate,
      enforced,
      countsAsRequest,
    };
  }

  /**
   * Records the actual usage of a reservation and frees what it held. Exactly once: a second settle (or a settle
   * after release) changes nothing and answers `duplicate`. A settle after the sweeper expired the reservation
   * still records the spend (`late`), so a slow request is never lost.
   */
  async settle(reservation: Reservation | string, usage: SettleUsage, within?: TransactionSql): Promise<SettleOutcome> {
    const id = typeof reservation === 'string' ? reservation : reservation.id;
    if (id === null || this.mode === 'off') return { status: 'unmetered', costMicros: 0 };
    const cost = costOf(usage);
    // `within`: the caller's transaction (a chat turn settles and stores its exchange in one).
    const settleIn = async (tx: TransactionSql) => {
      const row = await q.lockReservation(tx, id);
      if (!row || row.status === 'settled' || row.status === 'released') return 'duplicate' as const;
      const now = this.clock.now();
      const wasOpen = row.status === 'open';
      // Independent writes under the row lock, then the budget state they leave: pipelined, one round trip.
      const [, , , alertState] = await Promise.all([
        q.closeReservation(tx, id, 'settled', now),
        q.adjustBalance(tx, row.accountId, row.periodStart, {
          consumedMicros: cost,
          ...(wasOpen ? { reservedMicros: -row.reservedMicros } : {}),
        }),
        q.upsertUsageEvent(tx, this.eventOf(row, 'settled', now, { ...usage, costMicros: cost })),
        cost > 0 ? readAlertState(tx, row.accountId, row.periodStart) : undefined,
      ]);
      if (alertState) await this.budgetAlerts(tx, row.accountId, row.periodStart, alertState);
      return wasOpen ? ('settled' as const) : ('late' as const);
    };
    const outcome = within ? await settleIn(within) : await this.sql.begin(settleIn);
    if (outcome === 'duplicate') return { status: outcome, costMicros: 0 };
    return { status: outcome, costMicros: cost };
  }

  /**
   * Frees a reservation whose provider call never happened or failed without cost: the held micros and the
   * request count go back. Exactly once, like settle; releasing a settled reservation changes nothing.
   * Returns whether this call released it.
   */
  async release(reservation: Reservation | string): Promise<boolean> {
    const id = typeof reservation === 'string' ? reservation : reservation.id;
    if (id === null || this.mode === 'off') return false;
    return this.close(id, 'released');
  }

  /**
   * Closes an open reservation as `released` or `expired` (the sweeper), returning its holds to the balance. An
   * expired request keeps its request count (it did happen); a released one gives it back.
   */
  async close(id: string, status: 'released' | 'expired'): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const row = await q.lockReservation(tx, id);
      if (!row || row.status !== 'open') return false;
      const now = this.clock.now();
      await q.closeReservation(tx, id, status, now);
      await q.adjustBalance(tx, row.accountId, row.periodStart, {
        reservedMicros: -row.reservedMicros,
        voiceSecondsReserved: row.quotaExempt ? 0 : -row.reservedSeconds,
        requestCount: status === 'released' && row.countsAsRequest ? -1 : 0,
      });
      await q.upsertUsageEvent(tx, this.eventOf(row, status, now, { costMicros: 0 }));
      return true;
    });
  }

  /**
   * Inside a transaction: the account locked with its current period, balance and plan. Creates the hosting
   * account if an account somehow has none (every account should; shadow must not fail on a missing row).
   */
  async lock(tx: q.Queryable, accountId: string): Promise<LockedAccount> {
    let locked = await lockAccountPeriod(tx, accountId, this.clock, this.config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS);
    if (!locked) {
      await q.ensureHostingAccount(tx, accountId);
      locked = await lockAccountPeriod(tx, accountId, this.clock, this.config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS);
    }
    if (!locked) throw new Error(`no hosting account for ${accountId}`);
    return locked;
  }

  /** Records the budget thresholds a spend (or budget change) crossed: see applyBudgetAlerts. */
  budgetAlerts(
    tx: TransactionSql,
    accountId: string,
    periodStart: Date,
    state?: Parameters<typeof applyBudgetAlerts>[4],
  ): ReturnType<typeof applyBudgetAlerts> {
    const deps = {
      defaultLimitMicros: this.config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS,
      now: this.clock.now(),
      sink: this.onThresholdCrossed,
    };
    return applyBudgetAlerts(tx, deps, accountId, periodStart, state);
  }

  /** The usage event row of a reservation closing now. */
  eventOf(
    row: q.ReservationRow,
    outcome: 'settled' | 'released' | 'expired',
    now: Date,
    usage: SettleUsage & { costMicros: number },
  ): q.UsageEventInsert {
    return {
      id: newMeteringId('uev'),
      reservationId: row.id,
      accountId: row.accountId,
      periodStart: row.periodStart,
      kind: row.kind,
      source: row.source,
      assistantId: row.assistantId,
      mode: row.enforced ? 'enforce' : 'shadow',
      outcome,
      model: usage.model ?? null,
      inputTokens: Math.max(0, Math.round(usage.inputTokens ?? 0)),
      outputTokens: Math.max(0, Math.round(usage.outputTokens ?? 0)),
      units: Math.max(0, Math.round(usage.units ?? 0)),
      costMicros: usage.costMicros,
      reservedMicros: row.reservedMicros,
      createdAt: now,
    };
  }
}

/** The actual cost of a settle: given in micros, else priced from model and tokens. */
export function costOf(usage: SettleUsage): number {
  if (usage.actualMicros !== undefined) return Math.max(0, Math.ceil(usage.actualMicros));
  if (usage.model !== undefined) return priceChat(usage.model, usage.inputTokens ?? 0, usage.outputTokens ?? 0);
  return 0;
}

/** The enforce-mode decision, in the order an owner would want to hear it. Pure: no I/O. */
export function admissionRefusal(
  locked: LockedAccount,
  request: { kind: q.UsageKind; estimate: number; countsAsRequest: boolean },
): Refusal | undefined {
  const { account, balance, plan } = locked;
  if (account.status !== 'active') return { kind: 'account_inactive', status: account.status };
  if (request.kind === 'eval' && !plan.evalsEnabled) return { kind: 'evals', planCode: plan.planCode };
  if (request.countsAsRequest && plan.monthlyRequestCap !== null && balance.requestCount >= plan.monthlyRequestCap) {
    return { kind: 'request_cap', monthlyRequestCap: plan.monthlyRequestCap, requestCount: balance.requestCount };
  }
  const limitMicros = limitMicrosOf(
    plan,
    account.limitOverrideMicros,
    balance.creditMicros,
    account.budgetHardLimitMicros,
  );
  if (balance.consumedMicros + balance.reservedMicros + request.estimate > limitMicros) {
    return {
      kind: 'budget',
      limitMicros,
      consumedMicros: balance.consumedMicros,
      reservedMicros: balance.reservedMicros,
      requestedMicros: request.estimate,
    };
  }
  return undefined;
}
