import { SUCCESS_SQL } from '../conversations/index.js';
import type { Sql } from '../db/index.js';

export interface Totals {
  conversations: number;
  messages: number;
  answered: number;
  noAnswer: number;
  modelFailures: number;
  positive: number;
  negative: number;
}

export async function totals(sql: Sql, assistantId: string, from: Date, to: Date): Promise<Totals> {
  const [row] = await sql<Totals[]>`
    select
      (select count(*) from conversations where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to}) as conversations,
      (select count(*) from messages where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to}) as messages,
      (select count(*) from messages where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to} and outcome = 'answered') as answered,
      (select count(*) from messages where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to} and outcome = 'no_answer') as no_answer,
      (select count(*) from messages where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to} and outcome = 'model_failure') as model_failures,
      (select count(*) from message_feedback where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to} and rating = 'positive') as positive,
      (select count(*) from message_feedback where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to} and rating = 'negative') as negative`;
  return row!;
}

export interface DailyRow {
  day: string;
  conversations: number;
  messages: number;
  answered: number;
  noAnswer: number;
}

/** One row per UTC day in [from, to), zeros included. */
export async function daily(sql: Sql, assistantId: string, from: Date, to: Date): Promise<DailyRow[]> {
  return sql<DailyRow[]>`
    with days as (
      select generate_series(date_trunc('day', ${from}::timestamptz at time zone 'utc'),
                             date_trunc('day', (${to}::timestamptz - interval '1 microsecond') at time zone 'utc'),
                             interval '1 day') as day),
    c as (
      select date_trunc('day', created_at at time zone 'utc') as day, count(*) as n
      from conversations where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to} group by 1),
    m as (
      select date_trunc('day', created_at at time zone 'utc') as day, count(*) as n,
             count(*) filter (where outcome = 'answered') as answered,
             count(*) filter (where outcome = 'no_answer') as no_answer
      from messages where assistant_id = ${assistantId} and created_at >= ${from} and created_at < ${to} group by 1)
    select to_char(days.day, 'YYYY-MM-DD') as day, coalesce(c.n, 0) as conversations, coalesce(m.n, 0) as messages,
           coalesce(m.answered, 0) as answered, coalesce(m.no_answer, 0) as no_answer
    from days left join c on c.day = days.day left join m on m.day = days.day
    order by days.day`;
}

export interface UnansweredRow {
  question: string;
  count: number;
  lastAskedAt: Date;
}

/** The questions most often answered `no_answer`, grouped case- and space-insensitively. */
export async function topUnanswered(
  sql: Sql,
  assistantId: string,
  from: Date,
  to: Date,
  limit: number,
): Promise<UnansweredRow[]> {
  return sql<UnansweredRow[]>`
    select min(q.content) as question, count(*) as count, max(q.created_at) as last_asked_at
    from messages a join messages q on q.id = a.in_reply_to
    where a.assistant_id = ${assistantId} and a.outcome = 'no_answer' and a.created_at >= ${from} and a.created_at < ${to}
    group by lower(regexp_replace(trim(q.content), '\\s+', ' ', 'g'))
    order by count(*) desc, max(q.created_at) desc
    limit ${limit}`;
}

export interface AnalysisDayRow {
  day: string;
  analysed: number;
  passed: number;
  failed: number;
  positive: number;
  neutral: number;
  negative: number;
}

/**
 * The assistant's analysed conversations per UTC day of their start in [from, to), days without one left out: how many,
 * their verdicts as pass or fail (SUCCESS_SQL) and their sentiment labels.
 */
export async function analysisDaily(sql: Sql, assistantId: string, from: Date, to: Date): Promise<AnalysisDayRow[]> {
  return sql<AnalysisDayRow[]>`
    select to_char(date_trunc('day', c.created_at at time zone 'utc'), 'YYYY-MM-DD') as day,
           count(*)::int as analysed,
           count(*) filter (where (${sql.unsafe(SUCCESS_SQL)}) = 'pass')::int as passed,
           count(*) filter (where (${sql.unsafe(SUCCESS_SQL)}) = 'fail')::int as failed,
           count(*) filter (where a.result->'sentiment'->>'label' = 'positive')::int as positive,
           count(*) filter (where a.result->'sentiment'->>'label' = 'neutral')::int as neutral,
           count(*) filter (where a.result->'sentiment'->>'label' = 'negative')::int as negative
    from conversation_analyses a join conversations c on c.id = a.conversation_id
    where a.assistant_id = ${assistantId} and a.result is not null and c.created_at >= ${from} and c.created_at < ${to}
    group by 1 order by 1`;
}
