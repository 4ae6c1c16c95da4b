import type { Sql, TransactionSql } from '../db/index.js';
import type { AnalysisResult, TranscriptMessage } from './types.js';

type Db = Sql | TransactionSql;

export interface AnalysisRow {
  conversationId: string;
  accountId: string;
  assistantId: string;
  settingsVersion: string;
  trigger: string;
  status: 'pending' | 'done';
  attempts: number;
  result: AnalysisResult | null;
  requestedAt: Date;
  completedAt: Date | null;
}

const ROW =
  'conversation_id, account_id, assistant_id, settings_version, trigger, status, attempts, result, requested_at, completed_at';

/**
 * Queues an analysis of the conversation. Without `force` it changes nothing when the row already names this trigger
 * and settings version (an automatic analysis runs once); with it (the owner's re-run) it always queues again. A
 * worker holding the previous lease loses it, so its result is not stored. Resolves whether anything was queued.
 */
export async function enqueue(
  sql: Db,
  job: { conversationId: string; accountId: string; assistantId: string; version: string; trigger: string },
  force = false,
): Promise<boolean> {
  const rows = await sql`
    insert into conversation_analyses (conversation_id, account_id, assistant_id, settings_version, trigger)
    values (${job.conversationId}, ${job.accountId}, ${job.assistantId}, ${job.version}, ${job.trigger})
    on conflict (conversation_id) do update set
      settings_version = excluded.settings_version, trigger = excluded.trigger, status = 'pending', attempts = 0,
      lease_token = null, locked_until = null, requested_at = now()
    where ${force}
       or conversation_analyses.trigger <> excluded.trigger
       or conversation_analyses.settings_version <> excluded.settings_version
    returning conversation_id`;
  return rows.length > 0;
}

/** A chat conversation as the idle sweep would queue it (its trigger names the message count it ended at). */
export async function endedChat(
  sql: Db,
  accountId: string,
  conversationId: string,
): Promise<{ conversationId: string; accountId: string; assistantId: string; trigger: string } | undefined> {
  const [row] = await sql<Array<{ conversationId: string; accountId: string; assistantId: string; trigger: string }>>`
    select id as conversation_id, account_id, assistant_id, 'chat:' || message_count as trigger
    from conversations where id = ${conversationId} and account_id = ${accountId}`;
  return row;
}

export interface ClaimedJob {
  conversationId: string;
  accountId: string;
  assistantId: string;
  trigger: string;
  attempts: number;
}

/** The oldest pending analysis nobody holds (or whose holder's lease ran out), leased to `token`. */
export async function claimNext(sql: Db, token: string, leaseMs: number): Promise<ClaimedJob | undefined> {
  const [row] = await sql<ClaimedJob[]>`
    update conversation_analyses set lease_token = ${token}, attempts = attempts + 1,
      locked_until = now() + ${leaseMs} * interval '1 millisecond'
    where conversation_id = (
      select conversation_id from conversation_analyses
      where status = 'pending' and (locked_until is null or locked_until < now())
      order by requested_at limit 1 for update skip locked)
    returning conversation_id, account_id, assistant_id, trigger, attempts`;
  return row;
}

/** Gives a lease back (the worker is stopping): any instance claims it again at once. */
export async function release(sql: Db, conversationId: string, token: string): Promise<void> {
  await sql`
    update conversation_analyses set lease_token = null, locked_until = null, attempts = greatest(attempts - 1, 0)
    where conversation_id = ${conversationId} and lease_token = ${token}`;
}

/** Stores the result if the lease is still ours; resolves whether it was (a re-queue or re-run took it otherwise). */
export async function complete(
  sql: Db,
  conversationId: string,
  token: string,
  result: AnalysisResult,
): Promise<boolean> {
  const rows = await sql`
    update conversation_analyses set status = 'done', result = ${sql.json(result as never)}, lease_token = null,
      locked_until = null, completed_at = now()
    where conversation_id = ${conversationId} and lease_token = ${token} and status = 'pending'
    returning conversation_id`;
  return rows.length > 0;
}

export async function findAnalysis(
  sql: Db,
  accountId: string,
  conversationId: string,
): Promise<AnalysisRow | undefined> {
  const [row] = await sql<AnalysisRow[]>`
    select ${sql.unsafe(ROW)} from conversation_analyses
    where conversation_id = ${conversationId} and account_id = ${accountId}`;
  return row;
}

export interface ConversationFacts {
  id: string;
  accountId: string;
  assistantId: string;
  source: string;
  createdAt: Date;
  lastMessageAt: Date | null;
  chatCostMicros: number;
}

export async function findConversation(sql: Db, id: string): Promise<ConversationFacts | undefined> {
  const [row] = await sql<ConversationFacts[]>`
    select c.id, c.account_id, c.assistant_id, c.source, c.created_at,
           (select max(created_at) from messages where conversation_id = c.id) as last_message_at,
           (select coalesce(sum(cost_micros), 0)::bigint from messages where conversation_id = c.id) as chat_cost_micros
    from conversations c where c.id = ${id}`;
  return row ? { ...row, chatCostMicros: Number(row.chatCostMicros) } : undefined;
}

/** The conversation's messages, oldest first. */
export async function transcriptOf(sql: Db, conversationId: string, limit: number): Promise<TranscriptMessage[]> {
  return sql<TranscriptMessage[]>`
    select role, content, outcome, created_at as at from messages
    where conversation_id = ${conversationId} order by seq asc limit ${limit}`;
}

export interface CallFacts {
  id: string;
  state: string;
  endReason: string | null;
  endedBy: string | null;
  failureCode: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  billableSeconds: number;
  costMicros: number;
}

/** The conversation's voice calls, oldest first, each with its settled cost from the usage ledger. */
export async function callsOf(sql: Db, conversationId: string): Promise<CallFacts[]> {
  const rows = await sql<CallFacts[]>`
    select vs.id, vs.state, vs.end_reason, vs.ended_by, vs.failure_code, coalesce(vs.started_at, vs.created_at) as started_at,
           vs.ended_at, vs.billable_seconds,
           (select coalesce(sum(e.cost_micros), 0)::bigint from usage_reservations r
              join usage_events e on e.reservation_id = r.id and e.outcome = 'settled'
            where r.voice_session_id = vs.id) as cost_micros
    from voice_sessions vs where vs.conversation_id = ${conversationId}
    order by vs.created_at asc`;
  return rows.map((r) => ({ ...r, costMicros: Number(r.costMicros) }));
}

export interface ToolCallFacts {
  id: string;
  name: string;
  arguments: unknown;
  status: 'pending' | 'succeeded' | 'failed';
  result: unknown;
  error: string | null;
  durationMs: number;
  createdAt: Date;
}

/** The conversation's tool calls (chat and voice), in the order they were made. */
export async function toolCallsOf(sql: Db, conversationId: string): Promise<ToolCallFacts[]> {
  return sql<ToolCallFacts[]>`
    select id, name, arguments, status, result, error, duration_ms, created_at
    from tool_calls where conversation_id = ${conversationId} order by created_at, id`;
}

/** The assistant `a` analyses conversations of `channel`: some step is on and `for` names the channel. */
function analyses(sql: Db, channel: 'voice' | 'chat') {
  return sql`(a.settings->'analysis'->'for') ? ${channel}
    and (coalesce((a.settings->'analysis'->>'summary')::boolean, false)
      or coalesce((a.settings->'analysis'->>'sentiment')::boolean, false)
      or jsonb_typeof(a.settings->'analysis'->'structuredData') = 'object'
      or jsonb_typeof(a.settings->'analysis'->'successEvaluation') = 'object')`;
}

export interface Candidate {
  conversationId: string;
  accountId: string;
  assistantId: string;
  trigger: string;
  endedAt: Date;
}

/**
 * Calls settled at or after `since` whose assistant analyses calls and whose conversation has no analysis for that
 * call yet, nor one asked for since it settled (a re-run is never overwritten by the sweep), oldest first: each is a
 * conversation that ended.
 */
export async function settledCallsSince(sql: Db, since: Date, limit: number): Promise<Candidate[]> {
  return sql<Candidate[]>`
    select vs.conversation_id, vs.account_id, vs.assistant_id, 'voice:' || vs.id as trigger, vs.ended_at
    from voice_sessions vs join assistants a on a.id = vs.assistant_id
    where ${analyses(sql, 'voice')} and vs.ended_at is not null and vs.ended_at >= ${since} and vs.state in ('ended', 'lost')
      and vs.conversation_id is not null
      and not exists (select 1 from conversation_analyses a
                      where a.conversation_id = vs.conversation_id
                        and (a.trigger = 'voice:' || vs.id or a.requested_at >= vs.ended_at))
    order by vs.ended_at asc limit ${limit}`;
}

/**
 * Chat conversations (no call) whose assistant analyses chats and that have been quiet for its chatIdleMinutes (read
 * from the stored settings, 30 when unset), looked for over the last two days, not yet analysed at this message count
 * nor since it went quiet (a re-run asked for after the last message is not overwritten by the sweep).
 */
export async function idleChats(sql: Db, limit: number): Promise<Candidate[]> {
  return sql<Candidate[]>`
    select c.id as conversation_id, c.account_id, c.assistant_id, 'chat:' || c.message_count as trigger,
           c.updated_at as ended_at
    from conversations c join assistants a on a.id = c.assistant_id
    where c.updated_at > now() - interval '2 days' and ${analyses(sql, 'chat')}
      and c.updated_at < now() - make_interval(mins => coalesce((a.settings->'analysis'->>'chatIdleMinutes')::int, 30))
      and c.message_count > 0
      and not exists (select 1 from voice_sessions vs where vs.conversation_id = c.id)
      and not exists (select 1 from conversation_analyses x
                      where x.conversation_id = c.id
                        and (x.trigger = 'chat:' || c.message_count or x.requested_at >= c.updated_at))
    order by c.updated_at asc limit ${limit}`;
}

/** Whether the conversation had a voice call (its channel). */
export async function hasCall(sql: Db, conversationId: string): Promise<boolean> {
  const [row] = await sql<Array<{ any: boolean }>>`
    select exists (select 1 from voice_sessions where conversation_id = ${conversationId}) as any`;
  return row?.any ?? false;
}
