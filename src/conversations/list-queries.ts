import type { PageCursor } from '../assistants/index.js';
import type { Sql, TransactionSql } from '../db/index.js';
import type { ConversationRow, Outcome } from './queries.js';

type Db = Sql | TransactionSql;

export type Channel = 'chat' | 'voice';

/** What the owner's list filters on; every field optional. */
export interface ConversationFilter {
  accountId: string;
  assistantId?: string | undefined;
  /** voice: at least one call; chat: none. */
  channel?: Channel | undefined;
  /** Started at or after / before (created_at). */
  from?: Date | undefined;
  to?: Date | undefined;
  /** Listed with this outcome (see OUTCOME_SQL). */
  outcome?: Outcome | undefined;
  /** Words in any message (case-insensitive substring). */
  text?: string | undefined;
  visitorId?: string | undefined;
  /** Just this one. */
  id?: string | undefined;
  /** By the analysis verdict (see SUCCESS below). */
  success?: 'pass' | 'fail' | undefined;
  scoreMin?: number | undefined;
  scoreMax?: number | undefined;
  sentiment?: 'positive' | 'neutral' | 'negative' | undefined;
  /** A structured data field that was found; with dataValue, whose value holds these words. */
  dataField?: string | undefined;
  dataValue?: string | undefined;
}

/** The analysis columns the list reads (null: never analysed). */
export interface AnalysisBriefColumns {
  analysed: boolean;
  analysisSummary: string | null;
  analysisSuccess: 'pass' | 'fail' | null;
  analysisVerdict: boolean | number | string | null;
  analysisSentiment: 'positive' | 'neutral' | 'negative' | null;
  analysisData: Record<string, unknown> | null;
}

/** A conversation with what the list shows: calls, cost, the first question, how it went and when it last moved. */
export interface ConversationSummaryRow extends ConversationRow {
  /** A phone call's caller (E.164 as the carrier gave it); null for every other source. Shown masked. */
  callerNumber: string | null;
  callCount: number;
  /** Chat turns (their recorded cost) plus voice calls (their settled usage events). */
  chatCostMicros: number;
  voiceCostMicros: number;
  firstMessage: string | null;
  /**
   * The worst outcome of its answers: model_failure, then no_answer (also when its last question has no answer after
   * it), then answered; null without messages.
   */
  outcome: Outcome | null;
  lastActivityAt: Date;
}

export type ConversationListRow = ConversationSummaryRow & AnalysisBriefColumns;

/** `%` and `_` are literal in what an owner types. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * An analysis verdict as pass or fail: pass_fail as given, score_1_10 from 6 up is a pass; descriptive verdicts and
 * conversations without one are neither. The same rule is the analytics' success rate.
 */
export const SUCCESS_SQL = `case a.result->'successEvaluation'->>'rubric'
  when 'pass_fail' then case a.result->'successEvaluation'->>'verdict' when 'true' then 'pass' when 'false' then 'fail' end
  when 'score_1_10' then case when (a.result->'successEvaluation'->>'verdict')::numeric >= 6 then 'pass' else 'fail' end
end`;
const SCORE_SQL = `case when a.result->'successEvaluation'->>'rubric' = 'score_1_10'
  then (a.result->'successEvaluation'->>'verdict')::numeric end`;

/**
 * The outcome the list shows, over one conversation's messages (an aggregate): the worst of its answers,
 * model_failure, then no_answer, then answered. A last question with no answer after it (a voice turn that was never
 * answered) is not answered. The outcome filter compares with this same value, so what it selects is what the list
 * shows.
 */
const OUTCOME_SQL = `case when bool_or(outcome = 'model_failure') then 'model_failure'
  when bool_or(outcome = 'no_answer')
       or max(seq) filter (where role = 'user') > coalesce(max(seq) filter (where role = 'assistant'), -1)
    then 'no_answer'
  when bool_or(outcome = 'answered') then 'answered' end`;

function analysisFilters(sql: Db, f: ConversationFilter) {
  const fields =
    f.dataField !== undefined || f.dataValue !== undefined
      ? sql`and exists (select 1 from jsonb_each_text(case when jsonb_typeof(a.result->'structuredData') = 'object'
                          then a.result->'structuredData' else '{}'::jsonb end) d
                        where d.value is not null
                          ${f.dataField !== undefined ? sql`and d.key = ${f.dataField}` : sql``}
                          ${f.dataValue !== undefined ? sql`and d.value ilike ${likePattern(f.dataValue)} escape '\\'` : sql``})`
      : sql``;
  return sql`
    ${f.success !== undefined ? sql`and (${sql.unsafe(SUCCESS_SQL)}) = ${f.success}` : sql``}
    ${f.scoreMin !== undefined ? sql`and (${sql.unsafe(SCORE_SQL)}) >= ${f.scoreMin}` : sql``}
    ${f.scoreMax !== undefined ? sql`and (${sql.unsafe(SCORE_SQL)}) <= ${f.scoreMax}` : sql``}
    ${f.sentiment !== undefined ? sql`and a.result->'sentiment'->>'label' = ${f.sentiment}` : sql``}
    ${fields}`;
}

export async function summaryPage(
  sql: Db,
  f: ConversationFilter,
  after: PageCursor | undefined,
  limit: number,
): Promise<ConversationListRow[]> {
  return sql<ConversationListRow[]>`
    select c.id, c.assistant_id, c.account_id, c.visitor_id, c.source, c.message_count, c.created_at, c.updated_at,
           c.caller_number, v.call_count, coalesce(m.cost, 0)::bigint as chat_cost_micros, coalesce(v.cost, 0)::bigint as voice_cost_micros,
           (select left(content, 300) from messages fm where fm.conversation_id = c.id and fm.role = 'user'
             order by fm.seq limit 1) as first_message,
           m.outcome, greatest(c.updated_at, m.last_at, v.last_at) as last_activity_at,
           a.result is not null as analysed, a.result->>'summary' as analysis_summary,
           ${sql.unsafe(SUCCESS_SQL)} as analysis_success, a.result->'successEvaluation'->'verdict' as analysis_verdict,
           a.result->'sentiment'->>'label' as analysis_sentiment,
           case when jsonb_typeof(a.result->'structuredData') = 'object' then a.result->'structuredData' end as analysis_data
    from conversations c
    left join conversation_analyses a on a.conversation_id = c.id and a.account_id = c.account_id
    left join lateral (
      select sum(cost_micros) as cost, max(created_at) as last_at,
             ${sql.unsafe(OUTCOME_SQL)} as outcome
      from messages where conversation_id = c.id
    ) m on true
    left join lateral (
      select count(*)::int as call_count, max(coalesce(vs.ended_at, now())) as last_at, sum(ev.cost) as cost
      from voice_sessions vs
      left join lateral (
        select sum(e.cost_micros) as cost from usage_reservations r
        join usage_events e on e.reservation_id = r.id and e.outcome = 'settled'
        where r.voice_session_id = vs.id
      ) ev on true
      where vs.conversation_id = c.id and vs.state <> 'failed'
    ) v on true
    where c.account_id = ${f.accountId}
      ${f.assistantId !== undefined ? sql`and c.assistant_id = ${f.assistantId}` : sql``}
      ${f.id !== undefined ? sql`and c.id = ${f.id}` : sql``}
      ${f.visitorId !== undefined ? sql`and c.visitor_id = ${f.visitorId}` : sql``}
      ${f.from !== undefined ? sql`and c.created_at >= ${f.from}` : sql``}
      ${f.to !== undefined ? sql`and c.created_at < ${f.to}` : sql``}
      ${f.channel === 'voice' ? sql`and v.call_count > 0` : f.channel === 'chat' ? sql`and v.call_count = 0` : sql``}
      ${f.outcome !== undefined ? sql`and m.outcome = ${f.outcome}` : sql``}
      ${
        f.text !== undefined
          ? sql`and exists (select 1 from messages tm where tm.conversation_id = c.id
                              and tm.content ilike ${likePattern(f.text)} escape '\\')`
          : sql``
      }
      ${analysisFilters(sql, f)}
      ${after ? sql`and (c.created_at, c.id) < (${after.createdAt}, ${after.id})` : sql``}
    order by c.created_at desc, c.id desc limit ${limit + 1}`;
}

/** What one voice call cost: the sum of its grants' settled usage events. */
export async function voiceCallCosts(sql: Db, conversationId: string): Promise<Map<string, number>> {
  const rows = await sql<Array<{ id: string; cost: number }>>`
    select vs.id, coalesce(sum(e.cost_micros), 0)::bigint as cost
    from voice_sessions vs
    left join usage_reservations r on r.voice_session_id = vs.id
    left join usage_events e on e.reservation_id = r.id and e.outcome = 'settled'
    where vs.conversation_id = ${conversationId}
    group by vs.id`;
  return new Map(rows.map((r) => [r.id, Number(r.cost)]));
}

/** The account's conversations of one visitor (ids only). */
export async function conversationIdsOfVisitor(sql: Db, accountId: string, visitorId: string): Promise<string[]> {
  const rows = await sql<Array<{ id: string }>>`
    select id from conversations where account_id = ${accountId} and visitor_id = ${visitorId}`;
  return rows.map((r) => r.id);
}

/** Voice sessions of these conversations, and whether any still runs. */
export async function sessionsOf(sql: Db, conversationIds: string[]): Promise<Array<{ id: string; state: string }>> {
  if (conversationIds.length === 0) return [];
  return sql<Array<{ id: string; state: string }>>`
    select id, state from voice_sessions where conversation_id = any(${sql.array(conversationIds)})`;
}

/**
 * Erases conversations (messages and feedback go with them by cascade) and takes the visitor's id off their voice
 * sessions, which stay as the billing record of the call (no transcript, no conversation, no visitor). Returns how
 * many of each went.
 */
export async function eraseConversations(
  tx: TransactionSql,
  accountId: string,
  conversationIds: string[],
): Promise<{ conversations: number; messages: number; feedback: number; calls: number }> {
  if (conversationIds.length === 0) return { conversations: 0, messages: 0, feedback: 0, calls: 0 };
  const ids = tx.array(conversationIds);
  const [counts] = await tx<Array<{ messages: number; feedback: number }>>`
    select (select count(*)::int from messages where conversation_id = any(${ids})) as messages,
           (select count(*)::int from message_feedback f join messages m on m.id = f.message_id
             where m.conversation_id = any(${ids})) as feedback`;
  const calls = await tx`
    update voice_sessions set visitor_id = null
    where account_id = ${accountId} and conversation_id = any(${ids})`;
  const gone = await tx`delete from conversations where account_id = ${accountId} and id = any(${ids})`;
  return { conversations: gone.count, messages: counts!.messages, feedback: counts!.feedback, calls: calls.count };
}

/** Voice sessions of a visitor that belong to no conversation any more: their visitor id goes too. */
export async function forgetVisitorSessions(tx: TransactionSql, accountId: string, visitorId: string): Promise<number> {
  const res = await tx`
    update voice_sessions set visitor_id = null where account_id = ${accountId} and visitor_id = ${visitorId}`;
  return res.count;
}
