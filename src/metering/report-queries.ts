import type { BalanceRow, HostingAccountRow, Queryable } from './queries.js';
import type { PlanEntitlements } from './plans.js';

export interface AssistantUsageRow {
  assistantId: string | null;
  costMicros: number;
  requestCount: number;
  inputTokens: number;
  outputTokens: number;
  events: number;
}

/**
 * Spend per assistant in one period (settled events; releases and expiries cost nothing), from the per-period
 * totals the usage_events trigger keeps (migration 0007): one index range per account and period, however many
 * events the period holds.
 */
export async function usageByAssistant(
  sql: Queryable,
  accountId: string,
  periodStart: Date,
): Promise<AssistantUsageRow[]> {
  return sql<AssistantUsageRow[]>`
    select nullif(assistant_key, '') as assistant_id, cost_micros, request_count, input_tokens, output_tokens, events
    from usage_period_assistant_totals
    where account_id = ${accountId} and period_start = ${periodStart} and events > 0
    order by cost_micros desc, nullif(assistant_key, '') nulls last`;
}

export interface UsageEventRow {
  id: string;
  kind: string;
  source: string;
  assistantId: string | null;
  mode: string;
  outcome: string;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  units: number;
  costMicros: number;
  createdAt: Date;
}

export async function recentUsageEvents(sql: Queryable, accountId: string, limit: number): Promise<UsageEventRow[]> {
  return sql<UsageEventRow[]>`
    select id, kind, source, assistant_id, mode, outcome, model, input_tokens, output_tokens, units, cost_micros, created_at
    from usage_events where account_id = ${accountId}
    order by created_at desc, id desc limit ${limit}`;
}

/** The hosting account with its stored period's balance and its plan row, in one round trip (the usage reads). */
export interface AccountSnapshot {
  account: HostingAccountRow;
  balance: BalanceRow | undefined;
  plan: PlanEntitlements | undefined;
}

interface SnapshotRow extends HostingAccountRow {
  bPeriodStart: Date | null;
  bPeriodEnd: Date | null;
  consumedMicros: number | null;
  reservedMicros: number | null;
  creditMicros: number | null;
  requestCount: number | null;
  voiceSecondsUsed: number | null;
  voiceSecondsReserved: number | null;
  playgroundVoiceSeconds: number | null;
  voiceCostMicros: number | null;
  pPlanCode: PlanEntitlements['planCode'] | null;
  budgetMicros: number | null;
  maxAssistants: number | null;
  monthlyRequestCap: number | null;
  evalsEnabled: boolean | null;
  voiceMinutes: number | null;
  voiceConcurrentCalls: number | null;
}

export async function readAccountSnapshot(sql: Queryable, accountId: string): Promise<AccountSnapshot | undefined> {
  const [r] = await sql<SnapshotRow[]>`
    select h.account_id, h.plan_code, h.status, h.period_start, h.period_end, h.period_anchor, h.limit_override_micros,
           h.budget_hard_limit_micros, h.budget_alert_thresholds,
           b.period_start as b_period_start, b.period_end as b_period_end, b.consumed_micros, b.reserved_micros, b.credit_micros,
           b.request_count, b.voice_seconds_used, b.voice_seconds_reserved, b.playground_voice_seconds, b.voice_cost_micros,
           p.plan_code as p_plan_code, p.budget_micros, p.max_assistants, p.monthly_request_cap, p.evals_enabled, p.voice_minutes,
           p.voice_concurrent_calls
    from hosting_accounts h
    left join usage_balances b on b.account_id = h.account_id and b.period_start = h.period_start
    left join plan_entitlements p on p.plan_code = h.plan_code
    where h.account_id = ${accountId}`;
  if (!r) return undefined;
  const account: HostingAccountRow = {
    accountId: r.accountId,
    planCode: r.planCode,
    status: r.status,
    periodStart: r.periodStart,
    periodEnd: r.periodEnd,
    periodAnchor: r.periodAnchor,
    limitOverrideMicros: r.limitOverrideMicros,
    budgetHardLimitMicros: r.budgetHardLimitMicros,
    budgetAlertThresholds: r.budgetAlertThresholds,
  };
  const balance: BalanceRow | undefined =
    r.bPeriodStart === null
      ? undefined
      : {
          accountId: r.accountId,
          periodStart: r.bPeriodStart,
          periodEnd: r.bPeriodEnd!,
          consumedMicros: r.consumedMicros!,
          reservedMicros: r.reservedMicros!,
          creditMicros: r.creditMicros!,
          requestCount: r.requestCount!,
          voiceSecondsUsed: r.voiceSecondsUsed!,
          voiceSecondsReserved: r.voiceSecondsReserved!,
          playgroundVoiceSeconds: r.playgroundVoiceSeconds!,
          voiceCostMicros: r.voiceCostMicros!,
        };
  const plan: PlanEntitlements | undefined =
    r.pPlanCode === null
      ? undefined
      : {
          planCode: r.pPlanCode,
          budgetMicros: r.budgetMicros!,
          maxAssistants: r.maxAssistants,
          monthlyRequestCap: r.monthlyRequestCap,
          evalsEnabled: r.evalsEnabled!,
          voiceMinutes: r.voiceMinutes!,
          voiceConcurrentCalls: r.voiceConcurrentCalls!,
        };
  return { account, balance, plan };
}
