import type { PageCursor } from '../assistants/index.js';
import type { Sql } from '../db/index.js';

/** Counts of one account over [from, to). */
export interface DayTotals {
  calls: number;
  chats: number;
  questions: number;
  answered: number;
  noAnswer: number;
  modelFailures: number;
  spendMicros: number;
  billableSeconds: number;
}

/**
 * Calls: voice sessions started in the range that reached a provider (failed mints are not calls). Chats: conversations
 * started in the range without any call. Questions and answers: messages in the range. Spend: settled usage events.
 */
export async function dayTotals(sql: Sql, accountId: string, from: Date, to: Date): Promise<DayTotals> {
  const [row] = await sql<DayTotals[]>`
    with owned as (select id from assistants where account_id = ${accountId}),
    m as (
      select count(*) filter (where role = 'user')::int as questions,
             count(*) filter (where outcome = 'answered')::int as answered,
             count(*) filter (where outcome = 'no_answer')::int as no_answer,
             count(*) filter (where outcome = 'model_failure')::int as model_failures
      from messages where assistant_id in (select id from owned) and created_at >= ${from} and created_at < ${to})
    select
      (select count(*)::int from voice_sessions where account_id = ${accountId} and state <> 'failed'
        and created_at >= ${from} and created_at < ${to}) as calls,
      (select coalesce(sum(billable_seconds), 0)::int from voice_sessions where account_id = ${accountId}
        and state <> 'failed' and created_at >= ${from} and created_at < ${to}) as billable_seconds,
      (select count(*)::int from conversations c where c.account_id = ${accountId}
        and c.created_at >= ${from} and c.created_at < ${to}
        and not exists (select 1 from voice_sessions v where v.conversation_id = c.id and v.state <> 'failed')) as chats,
      m.questions, m.answered, m.no_answer, m.model_failures,
      (select coalesce(sum(cost_micros), 0)::int8 from usage_events where account_id = ${accountId} and outcome = 'settled'
        and created_at >= ${from} and created_at < ${to}) as spend_micros
    from m`;
  return { ...row!, spendMicros: Number(row!.spendMicros) };
}

/** Settled spend by kind (chat, voice, ingestion, eval) over [from, to). */
export async function spendByKind(
  sql: Sql,
  accountId: string,
  from: Date,
  to: Date,
): Promise<Array<{ kind: string; costMicros: number }>> {
  const rows = await sql<Array<{ kind: string; costMicros: string }>>`
    select kind, sum(cost_micros)::int8 as cost_micros from usage_events
    where account_id = ${accountId} and outcome = 'settled' and created_at >= ${from} and created_at < ${to}
    group by kind order by kind`;
  return rows.map((r) => ({ kind: r.kind, costMicros: Number(r.costMicros) }));
}

/** Turn latency percentiles of the account's calls started in the range (end of speech to first answer audio). */
export async function turnLatency(
  sql: Sql,
  accountId: string,
  from: Date,
  to: Date,
): Promise<{ turns: number; p50Ms: number | null; p95Ms: number | null }> {
  const [row] = await sql<Array<{ turns: number; p50Ms: number | null; p95Ms: number | null }>>`
    select count(*)::int as turns,
           percentile_cont(0.5) within group (order by (turn->>'latencyMs')::float8) as p50_ms,
           percentile_cont(0.95) within group (order by (turn->>'latencyMs')::float8) as p95_ms
    from voice_timelines t cross join lateral jsonb_array_elements(t.turns) as turn
    where t.account_id = ${accountId} and t.minted_at >= ${from} and t.minted_at < ${to}
      and turn ? 'latencyMs'`;
  return row!;
}

/** Why the range's calls ended: null is a caller (or client) hang-up; active calls are not counted. */
export async function endReasons(
  sql: Sql,
  accountId: string,
  from: Date,
  to: Date,
): Promise<Array<{ reason: string | null; count: number }>> {
  return sql<Array<{ reason: string | null; count: number }>>`
    select end_reason as reason, count(*)::int as count from voice_sessions
    where account_id = ${accountId} and state in ('ended', 'lost') and created_at >= ${from} and created_at < ${to}
    group by end_reason order by count(*) desc, end_reason nulls first`;
}

export interface AssistantDayRow {
  assistantId: string;
  publicId: string;
  name: string;
  calls: number;
  chats: number;
  questions: number;
  answered: number;
  spendMicros: number;
}

/** The same day per assistant, the busiest first; assistants with nothing that day are left out. */
export async function byAssistant(sql: Sql, accountId: string, from: Date, to: Date): Promise<AssistantDayRow[]> {
  const rows = await sql<AssistantDayRow[]>`
    select a.id as assistant_id, a.public_id, a.name,
      (select count(*)::int from voice_sessions v where v.assistant_id = a.id and v.state <> 'failed'
        and v.created_at >= ${from} and v.created_at < ${to}) as calls,
      (select count(*)::int from conversations c where c.assistant_id = a.id
        and c.created_at >= ${from} and c.created_at < ${to}
        and not exists (select 1 from voice_sessions v where v.conversation_id = c.id and v.state <> 'failed')) as chats,
      (select count(*)::int from messages m where m.assistant_id = a.id and m.role = 'user'
        and m.created_at >= ${from} and m.created_at < ${to}) as questions,
      (select count(*)::int from messages m where m.assistant_id = a.id and m.outcome = 'answered'
        and m.created_at >= ${from} and m.created_at < ${to}) as answered,
      (select coalesce(sum(e.cost_micros), 0)::int8 from usage_events e where e.account_id = ${accountId}
        and e.assistant_id = a.id and e.outcome = 'settled' and e.created_at >= ${from} and e.created_at < ${to}) as spend_micros
    from assistants a where a.account_id = ${accountId}`;
  return rows
    .map((r) => ({ ...r, spendMicros: Number(r.spendMicros) }))
    .filter((r) => r.calls + r.chats + r.questions + r.spendMicros > 0)
    .sort((a, b) => b.calls + b.chats - (a.calls + a.chats) || a.name.localeCompare(b.name));
}

/** What the call log filters on; every field optional but the account. */
export interface CallFilter {
  accountId: string;
  assistantId?: string | undefined;
  source?: string | undefined;
  transport?: string | undefined;
  /** Digits of a number: the caller's, or one of the account's numbers (the calls its assistant took by phone). */
  phoneDigits?: string | undefined;
  endReason?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

export interface CallRow {
  id: string;
  assistantId: string;
  assistantPublicId: string;
  assistantName: string;
  conversationId: string | null;
  source: string;
  transport: string | null;
  callerNumber: string | null;
  state: string;
  endReason: string | null;
  endedBy: string | null;
  billableSeconds: number;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  costMicros: number;
  turns: number;
  latencyP50Ms: number | null;
}

/** One page of the account's calls (failed mints left out), newest first, with their cost and turn latency. */
export async function callPage(
  sql: Sql,
  f: CallFilter,
  after: PageCursor | undefined,
  limit: number,
): Promise<CallRow[]> {
  const hangup = f.endReason === 'hangup';
  const rows = await sql<CallRow[]>`
    select v.id, v.assistant_id, a.public_id as assistant_public_id, a.name as assistant_name, v.conversation_id,
           v.source, coalesce(t.transport, case when v.source = 'phone' then 'phone' end) as transport,
           v.caller_number, v.state, v.end_reason, v.ended_by, v.billable_seconds, v.created_at, v.started_at, v.ended_at,
           coalesce((select sum(e.cost_micros) from usage_reservations r
                     join usage_events e on e.reservation_id = r.id and e.outcome = 'settled'
                     where r.voice_session_id = v.id and r.account_id = v.account_id), 0)::int8 as cost_micros,
           coalesce(jsonb_array_length(t.turns), 0)::int as turns,
           (select percentile_cont(0.5) within group (order by (turn->>'latencyMs')::float8)
              from jsonb_array_elements(t.turns) as turn where turn ? 'latencyMs') as latency_p50_ms
    from voice_sessions v
    join assistants a on a.id = v.assistant_id
    left join voice_timelines t on t.session_id = v.id
    where v.account_id = ${f.accountId} and v.state <> 'failed'
      ${f.assistantId !== undefined ? sql`and v.assistant_id = ${f.assistantId}` : sql``}
      ${f.source !== undefined ? sql`and v.source = ${f.source}` : sql``}
      ${
        f.transport !== undefined
          ? sql`and coalesce(t.transport, case when v.source = 'phone' then 'phone' end) = ${f.transport}`
          : sql``
      }
      ${
        f.phoneDigits !== undefined
          ? sql`and (regexp_replace(coalesce(v.caller_number, ''), '[^0-9]', '', 'g') like ${`%${f.phoneDigits}%`}
                     or (v.source = 'phone' and exists (
                       select 1 from phone_numbers p where p.account_id = v.account_id and p.assistant_id = v.assistant_id
                         and regexp_replace(p.phone_number, '[^0-9]', '', 'g') like ${`%${f.phoneDigits}%`})))`
          : sql``
      }
      ${
        f.endReason !== undefined
          ? hangup
            ? sql`and v.state in ('ended', 'lost') and v.end_reason is null`
            : sql`and v.end_reason = ${f.endReason}`
          : sql``
      }
      ${f.from !== undefined ? sql`and v.created_at >= ${f.from}` : sql``}
      ${f.to !== undefined ? sql`and v.created_at < ${f.to}` : sql``}
      ${after ? sql`and (v.created_at, v.id) < (${after.createdAt}, ${after.id})` : sql``}
    order by v.created_at desc, v.id desc limit ${limit + 1}`;
  return rows.map((r) => ({ ...r, costMicros: Number(r.costMicros) }));
}
