import type { PlanEntitlements } from './plans.js';
import type { Queryable } from './queries.js';

/** What deciding a threshold crossing needs, read in one statement: the account, its plan, one period's balance. */
export interface AlertStateRow {
  planCode: string;
  limitOverrideMicros: number | null;
  budgetHardLimitMicros: number | null;
  budgetAlertThresholds: number[];
  periodEnd: Date;
  consumedMicros: number;
  reservedMicros: number;
  creditMicros: number;
  plan: PlanEntitlements | null;
  /** Thresholds already recorded for this period. */
  fired: number[];
}

interface RawAlertState extends Omit<AlertStateRow, 'plan'> {
  pPlanCode: PlanEntitlements['planCode'] | null;
  budgetMicros: number | null;
}

export async function readAlertState(
  sql: Queryable,
  accountId: string,
  periodStart: Date,
): Promise<AlertStateRow | undefined> {
  const [r] = await sql<RawAlertState[]>`
    select h.plan_code, h.limit_override_micros, h.budget_hard_limit_micros, h.budget_alert_thresholds,
           b.period_end, b.consumed_micros, b.reserved_micros, b.credit_micros,
           p.plan_code as p_plan_code, p.budget_micros,
           array(select a.threshold_percent from budget_alerts a
                 where a.account_id = h.account_id and a.period_start = b.period_start) as fired
    from hosting_accounts h
    join usage_balances b on b.account_id = h.account_id and b.period_start = ${periodStart}
    left join plan_entitlements p on p.plan_code = h.plan_code
    where h.account_id = ${accountId}`;
  if (!r) return undefined;
  const { pPlanCode, budgetMicros, ...rest } = r;
  // Only the budget matters here; the other caps are not read by the alert decision.
  const plan =
    pPlanCode === null
      ? null
      : ({ planCode: pPlanCode, budgetMicros: budgetMicros! } as PlanEntitlements & Record<string, unknown>);
  return { ...rest, plan };
}

export interface BudgetAlertRow {
  thresholdPercent: number;
  periodStart: Date;
  periodEnd: Date;
  spentMicros: number;
  budgetMicros: number;
  projectedMicros: number;
  createdAt: Date;
}

/** Records a crossing; undefined when another writer recorded it first (the primary key decides). */
export async function insertBudgetAlert(
  sql: Queryable,
  accountId: string,
  alert: Omit<BudgetAlertRow, 'createdAt'>,
  at: Date,
): Promise<BudgetAlertRow | undefined> {
  const [row] = await sql<BudgetAlertRow[]>`
    insert into budget_alerts (account_id, period_start, threshold_percent, period_end, spent_micros, budget_micros,
                               projected_micros, created_at)
    values (${accountId}, ${alert.periodStart}, ${alert.thresholdPercent}, ${alert.periodEnd}, ${alert.spentMicros},
            ${alert.budgetMicros}, ${alert.projectedMicros}, ${at})
    on conflict (account_id, period_start, threshold_percent) do nothing
    returning threshold_percent, period_start, period_end, spent_micros, budget_micros, projected_micros, created_at`;
  return row;
}

/** Re-arms thresholds: their rows go, so the next crossing records them again. */
export async function deleteBudgetAlerts(
  sql: Queryable,
  accountId: string,
  periodStart: Date,
  thresholds: number[],
): Promise<void> {
  if (thresholds.length === 0) return;
  await sql`
    delete from budget_alerts
    where account_id = ${accountId} and period_start = ${periodStart} and threshold_percent = any(${thresholds}::int4[])`;
}

export async function listBudgetAlerts(
  sql: Queryable,
  accountId: string,
  periodStart: Date,
): Promise<BudgetAlertRow[]> {
  return sql<BudgetAlertRow[]>`
    select threshold_percent, period_start, period_end, spent_micros, budget_micros, projected_micros, created_at
    from budget_alerts where account_id = ${accountId} and period_start = ${periodStart}
    order by threshold_percent`;
}

export async function writeBudgetSettings(
  sql: Queryable,
  accountId: string,
  settings: { alertThresholdsPercent: number[]; hardLimitMicros: number | null },
): Promise<void> {
  await sql`
    update hosting_accounts set budget_alert_thresholds = ${settings.alertThresholdsPercent}::int4[],
      budget_hard_limit_micros = ${settings.hardLimitMicros}
    where account_id = ${accountId}`;
}

export interface DailyRow {
  day: string;
  assistantId: string | null;
  source: string;
  kind: string;
  costMicros: number;
  requestCount: number;
  inputTokens: number;
  outputTokens: number;
  units: number;
  events: number;
}

/**
 * The per-day totals of [from, to] (UTC dates, inclusive), optionally of one period only: an index range on the
 * roll-up's primary key, a few rows per day however many events the days hold.
 */
export async function readDailyTotals(
  sql: Queryable,
  accountId: string,
  from: string,
  to: string,
  periodStart: Date | null,
): Promise<DailyRow[]> {
  return sql<DailyRow[]>`
    select to_char(day, 'YYYY-MM-DD') as day, nullif(assistant_key, '') as assistant_id, source, kind,
           sum(cost_micros)::int8 as cost_micros, sum(request_count)::int8 as request_count,
           sum(input_tokens)::int8 as input_tokens, sum(output_tokens)::int8 as output_tokens,
           sum(units)::int8 as units, sum(events)::int8 as events
    from usage_daily_totals
    where account_id = ${accountId} and day between ${from}::date and ${to}::date
      ${periodStart === null ? sql`` : sql`and period_start = ${periodStart}`}
    group by day, assistant_key, source, kind
    having sum(events) <> 0
    order by day, assistant_key, source, kind`;
}

/**
 * What each conversation cost, from the ledger: settled chat turns (the reservation names its conversation) and
 * voice grants (their voice session names it). Conversations without spend are absent.
 */
export async function costByConversation(
  sql: Queryable,
  accountId: string,
  conversationIds: readonly string[],
): Promise<Array<{ conversationId: string; costMicros: number }>> {
  if (conversationIds.length === 0) return [];
  const ids = [...conversationIds];
  return sql<Array<{ conversationId: string; costMicros: number }>>`
    select conversation_id, sum(cost)::int8 as cost_micros from (
      select r.conversation_id, e.cost_micros as cost
      from usage_reservations r join usage_events e on e.reservation_id = r.id
      where r.conversation_id = any(${ids}::text[]) and r.account_id = ${accountId}
      union all
      select v.conversation_id, e.cost_micros
      from voice_sessions v
      join usage_reservations r on r.voice_session_id = v.id and r.kind = 'voice'
      join usage_events e on e.reservation_id = r.id
      where v.conversation_id = any(${ids}::text[]) and v.account_id = ${accountId} and r.account_id = ${accountId}
    ) c group by conversation_id`;
}

/** What each voice call (session) cost, from its settled grants. Calls without spend are absent. */
export async function costByVoiceCall(
  sql: Queryable,
  accountId: string,
  sessionIds: readonly string[],
): Promise<Array<{ sessionId: string; costMicros: number }>> {
  if (sessionIds.length === 0) return [];
  return sql<Array<{ sessionId: string; costMicros: number }>>`
    select r.voice_session_id as session_id, sum(e.cost_micros)::int8 as cost_micros
    from usage_reservations r join usage_events e on e.reservation_id = r.id
    where r.voice_session_id = any(${[...sessionIds]}::text[]) and r.account_id = ${accountId} and r.kind = 'voice'
    group by r.voice_session_id`;
}
