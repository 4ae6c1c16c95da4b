import type { Queryable } from './queries.js';

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
export async function usageByAssistant(sql: Queryable, accountId: string, periodStart: Date): Promise<AssistantUsageRow[]> {
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
