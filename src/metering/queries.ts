import type postgres from 'postgres';
import type { PlanCode, PlanEntitlements } from './plans.js';

/** A client or a transaction scope. */
export type Queryable = postgres.ISql<Record<string, never>>;

export interface HostingAccountRow {
  accountId: string;
  planCode: PlanCode;
  status: 'active' | 'suspended' | 'disabled';
  periodStart: Date;
  periodEnd: Date;
  periodAnchor: Date | null;
  limitOverrideMicros: number | null;
  /** The owner's cap on the period's spend (at or below the plan budget); null: none. */
  budgetHardLimitMicros: number | null;
  /** Percentages of the effective budget that each raise one alert per period. */
  budgetAlertThresholds: number[];
}

export interface BalanceRow {
  accountId: string;
  periodStart: Date;
  periodEnd: Date;
  consumedMicros: number;
  reservedMicros: number;
  creditMicros: number;
  requestCount: number;
  voiceSecondsUsed: number;
  voiceSecondsReserved: number;
  playgroundVoiceSeconds: number;
  voiceCostMicros: number;
}

export type ReservationStatus = 'open' | 'settled' | 'released' | 'expired';
export type UsageKind = 'chat' | 'ingestion' | 'eval' | 'voice';
/** analysis: the post-call analysis of a conversation by a hosted model (src/analysis); test: a scenario run (src/scenarios). */
export type UsageSource = 'api' | 'widget' | 'playground' | 'phone' | 'dashboard' | 'system' | 'analysis' | 'test';

export interface ReservationRow {
  id: string;
  accountId: string;
  periodStart: Date;
  kind: UsageKind;
  source: UsageSource;
  assistantId: string | null;
  voiceSessionId: string | null;
  reservedMicros: number;
  reservedSeconds: number;
  countsAsRequest: boolean;
  enforced: boolean;
  quotaExempt: boolean;
  status: ReservationStatus;
  createdAt: Date;
  /** The chat conversation the reservation was made for; null otherwise. */
  conversationId?: string | null;
}

const HOSTING_COLUMNS =
  'account_id, plan_code, status, period_start, period_end, period_anchor, limit_override_micros, budget_hard_limit_micros, budget_alert_thresholds';
const BALANCE_COLUMNS =
  'account_id, period_start, period_end, consumed_micros, reserved_micros, credit_micros, request_count, voice_seconds_used, voice_seconds_reserved, playground_voice_seconds, voice_cost_micros';

/** The hosting account, row-locked (no key update: foreign keys pointing at it are not blocked). */
export async function lockHostingAccount(sql: Queryable, accountId: string): Promise<HostingAccountRow | undefined> {
  const [row] = await sql<HostingAccountRow[]>`
    select ${sql.unsafe(HOSTING_COLUMNS)} from hosting_accounts where account_id = ${accountId} for no key update`;
  return row;
}

export async function findHostingAccount(sql: Queryable, accountId: string): Promise<HostingAccountRow | undefined> {
  const [row] = await sql<
    HostingAccountRow[]
  >`select ${sql.unsafe(HOSTING_COLUMNS)} from hosting_accounts where account_id = ${accountId}`;
  return row;
}

/** Creates the hosting account (plan free) if the account has none. */
export async function ensureHostingAccount(sql: Queryable, accountId: string): Promise<void> {
  await sql`insert into hosting_accounts (account_id) values (${accountId}) on conflict do nothing`;
}

export async function setHostingPeriod(sql: Queryable, accountId: string, start: Date, end: Date): Promise<void> {
  await sql`update hosting_accounts set period_start = ${start}, period_end = ${end} where account_id = ${accountId}`;
}

export async function findPlan(sql: Queryable, planCode: string): Promise<PlanEntitlements | undefined> {
  const [row] = await sql<PlanEntitlements[]>`
    select plan_code, budget_micros, max_assistants, monthly_request_cap, evals_enabled, voice_minutes, voice_concurrent_calls
    from plan_entitlements where plan_code = ${planCode}`;
  return row;
}

export async function lockPlan(sql: Queryable, planCode: string): Promise<PlanEntitlements | undefined> {
  const [row] = await sql<PlanEntitlements[]>`
    select plan_code, budget_micros, max_assistants, monthly_request_cap, evals_enabled, voice_minutes, voice_concurrent_calls
    from plan_entitlements where plan_code = ${planCode} for update`;
  return row;
}

export async function writePlan(sql: Queryable, plan: PlanEntitlements): Promise<PlanEntitlements> {
  const [row] = await sql<PlanEntitlements[]>`
    update plan_entitlements set budget_micros = ${plan.budgetMicros}, max_assistants = ${plan.maxAssistants},
      monthly_request_cap = ${plan.monthlyRequestCap}, evals_enabled = ${plan.evalsEnabled}, voice_minutes = ${plan.voiceMinutes},
      voice_concurrent_calls = ${plan.voiceConcurrentCalls}
    where plan_code = ${plan.planCode}
    returning plan_code, budget_micros, max_assistants, monthly_request_cap, evals_enabled, voice_minutes, voice_concurrent_calls`;
  return row!;
}

export async function listPlans(sql: Queryable): Promise<PlanEntitlements[]> {
  return sql<PlanEntitlements[]>`
    select plan_code, budget_micros, max_assistants, monthly_request_cap, evals_enabled, voice_minutes, voice_concurrent_calls
    from plan_entitlements order by budget_micros, plan_code`;
}

/** Creates the period's balance row if missing (concurrent callers: one wins, the others see it). */
export async function ensureBalance(sql: Queryable, accountId: string, start: Date, end: Date): Promise<void> {
  await sql`
    insert into usage_balances (account_id, period_start, period_end) values (${accountId}, ${start}, ${end})
    on conflict (account_id, period_start) do update set period_end = excluded.period_end
    where usage_balances.period_end <> excluded.period_end`;
}

/** The period balance, row-locked until the transaction ends: admission serialises here. */
export async function lockBalance(sql: Queryable, accountId: string, start: Date): Promise<BalanceRow | undefined> {
  const [row] = await sql<BalanceRow[]>`
    select ${sql.unsafe(BALANCE_COLUMNS)} from usage_balances where account_id = ${accountId} and period_start = ${start} for update`;
  return row;
}

export async function findBalance(sql: Queryable, accountId: string, start: Date): Promise<BalanceRow | undefined> {
  const [row] = await sql<BalanceRow[]>`
    select ${sql.unsafe(BALANCE_COLUMNS)} from usage_balances where account_id = ${accountId} and period_start = ${start}`;
  return row;
}

/** Adds (or with negative values, removes) to a balance's counters in one statement. */
export async function adjustBalance(
  sql: Queryable,
  accountId: string,
  start: Date,
  delta: Partial<
    Record<
      | 'consumedMicros'
      | 'reservedMicros'
      | 'creditMicros'
      | 'requestCount'
      | 'voiceSecondsUsed'
      | 'voiceSecondsReserved'
      | 'playgroundVoiceSeconds'
      | 'voiceCostMicros',
      number
    >
  >,
): Promise<void> {
  const d = (k: keyof typeof delta) => delta[k] ?? 0;
  // greatest(0, ...): a counter never goes negative even if a bug released twice; the check constraint would abort.
  await sql`
    update usage_balances set
      consumed_micros          = greatest(0, consumed_micros + ${d('consumedMicros')}),
      reserved_micros          = greatest(0, reserved_micros + ${d('reservedMicros')}),
      credit_micros            = greatest(0, credit_micros + ${d('creditMicros')}),
      request_count            = greatest(0, request_count + ${d('requestCount')}),
      voice_seconds_used       = greatest(0, voice_seconds_used + ${d('voiceSecondsUsed')}),
      voice_seconds_reserved   = greatest(0, voice_seconds_reserved + ${d('voiceSecondsReserved')}),
      playground_voice_seconds = greatest(0, playground_voice_seconds + ${d('playgroundVoiceSeconds')}),
      voice_cost_micros        = greatest(0, voice_cost_micros + ${d('voiceCostMicros')})
    where account_id = ${accountId} and period_start = ${start}`;
}

export async function insertReservation(sql: Queryable, row: Omit<ReservationRow, 'status'>): Promise<void> {
  await sql`
    insert into usage_reservations (id, account_id, period_start, kind, source, assistant_id, voice_session_id, reserved_micros,
      reserved_seconds, counts_as_request, enforced, quota_exempt, status, created_at, conversation_id)
    values (${row.id}, ${row.accountId}, ${row.periodStart}, ${row.kind}, ${row.source}, ${row.assistantId}, ${row.voiceSessionId},
      ${row.reservedMicros}, ${row.reservedSeconds}, ${row.countsAsRequest}, ${row.enforced}, ${row.quotaExempt}, 'open', ${row.createdAt},
      ${row.conversationId ?? null})`;
}

/** The reservation, row-locked: whoever closes it first wins; the others see its new status. */
export async function lockReservation(sql: Queryable, id: string): Promise<ReservationRow | undefined> {
  const [row] = await sql<ReservationRow[]>`
    select id, account_id, period_start, kind, source, assistant_id, voice_session_id, reserved_micros, reserved_seconds,
           counts_as_request, enforced, quota_exempt, status, created_at
    from usage_reservations where id = ${id} for update`;
  return row;
}

export async function closeReservation(
  sql: Queryable,
  id: string,
  status: Exclude<ReservationStatus, 'open'>,
  at: Date,
): Promise<void> {
  await sql`update usage_reservations set status = ${status}, closed_at = ${at} where id = ${id}`;
}

/** Open reservations created before `before`, oldest first (the sweeper's work list). */
export async function listStaleReservationIds(sql: Queryable, before: Date, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from usage_reservations where status = 'open' and created_at < ${before} order by created_at limit ${limit}`;
  return rows.map((r) => r.id);
}

/** Every voice grant of one session, oldest first (settling a session whose owner died). */
export async function listVoiceReservations(
  sql: Queryable,
  sessionId: string,
): Promise<Array<{ id: string; status: ReservationStatus; reservedSeconds: number }>> {
  return sql<Array<{ id: string; status: ReservationStatus; reservedSeconds: number }>>`
    select id, status, reserved_seconds from usage_reservations
    where kind = 'voice' and voice_session_id = ${sessionId}
    order by created_at, id`;
}

/** Voice sessions of the account holding an open grant, other than `exceptSessionId`. */
export async function countActiveVoiceSessions(
  sql: Queryable,
  accountId: string,
  exceptSessionId: string,
): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(distinct voice_session_id)::int8 as n from usage_reservations
    where account_id = ${accountId} and kind = 'voice' and status = 'open' and voice_session_id <> ${exceptSessionId}`;
  return row?.n ?? 0;
}

export interface UsageEventInsert {
  id: string;
  reservationId: string;
  accountId: string;
  periodStart: Date;
  kind: UsageKind;
  source: UsageSource;
  assistantId: string | null;
  mode: 'shadow' | 'enforce';
  outcome: 'settled' | 'released' | 'expired';
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  units: number;
  costMicros: number;
  reservedMicros: number;
  createdAt: Date;
}

/**
 * The one usage event of a reservation. A settle arriving after the sweeper expired the reservation turns its
 * `expired` event into `settled` with the real cost (same row: still exactly one event per reservation).
 */
export async function upsertUsageEvent(sql: Queryable, e: UsageEventInsert): Promise<void> {
  await sql`
    insert into usage_events (id, reservation_id, account_id, period_start, kind, source, assistant_id, mode, outcome, model,
      input_tokens, output_tokens, units, cost_micros, reserved_micros, created_at)
    values (${e.id}, ${e.reservationId}, ${e.accountId}, ${e.periodStart}, ${e.kind}, ${e.source}, ${e.assistantId}, ${e.mode},
      ${e.outcome}, ${e.model}, ${e.inputTokens}, ${e.outputTokens}, ${e.units}, ${e.costMicros}, ${e.reservedMicros}, ${e.createdAt})
    on conflict (reservation_id) do update set
      outcome = excluded.outcome, model = excluded.model, input_tokens = excluded.input_tokens,
      output_tokens = excluded.output_tokens, units = excluded.units, cost_micros = excluded.cost_micros
    where usage_events.outcome = 'expired'`;
}

export async function countAssistants(sql: Queryable, accountId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int8 as n from assistants where account_id = ${accountId}`;
  return row?.n ?? 0;
}
