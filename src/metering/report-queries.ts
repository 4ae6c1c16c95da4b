import type { Queryable } from './queries.js';

export interface AssistantUsageRow {
  assistantId: string | null;
  costMicros: number;
  requestCount: number;
  inputTokens: number;
  outputTokens: number;
  events: number;
}

/** Spend per assistant in one period (settled events; releases and expiries cost nothing). */
export async function usageByAssistant(sql: Queryable, accountId: string, periodStart: Date): Promise<AssistantUsageRow[]> {
  return sql<AssistantUsageRow[]>`
    select e.assistant_id,
           coalesce(sum(e.cost_micros), 0)::int8 as cost_micros,
           count(*) filter (where r.counts_as_request and e.outcome <> 'released')::int8 as request_count,
           coalesce(sum(e.input_tokens), 0)::int8 as input_tokens,
           coalesce(sum(e.output_tokens), 0)::int8 as output_tokens,
           count(*)::int8 as events
    from usage_events e join usage_reservations r on r.id = e.reservation_id
    where e.account_id = ${accountId} and e.period_start = ${periodStart}
    group by e.assistant_id
    order by cost_micros desc, e.assistant_id nulls last`;
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
