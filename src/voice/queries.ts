import type { Sql, TransactionSql } from '../db/index.js';
import type { EndReason } from './end-reasons.js';
import type { TurnSource } from './session/transcripts.js';
import type { VoiceSource } from './types.js';

type Db = Sql | TransactionSql;

export interface VoiceSessionRow {
  id: string;
  accountId: string;
  assistantId: string;
  conversationId: string | null;
  source: VoiceSource;
  visitorId: string | null;
  state: 'active' | 'ended' | 'lost' | 'failed';
  endReason: Exclude<EndReason, null> | null;
  endedBy: 'client' | 'service' | 'reaper' | null;
  ownerInstance: string;
  ownerGeneration: number;
  usageSeconds: number;
  billableSeconds: number;
  usageFinalized: boolean;
  /** The owner's last liveness write (its renewal loop), so a dead owner can be told from a live one. */
  renewedAt: Date;
}

const COLUMNS = `id, account_id, assistant_id, conversation_id, source, visitor_id, state, end_reason, ended_by, owner_instance,
  owner_generation, usage_seconds, billable_seconds, usage_finalized, renewed_at`;

export interface NewVoiceSession {
  id: string;
  accountId: string;
  assistantId: string;
  conversationId: string | null;
  apiKeyId: string | null;
  source: VoiceSource;
  visitorId: string | null;
  capabilities: string[];
  recordingEnabled: boolean;
  recordingConsent: boolean;
  provider: string;
  providerSessionId: string | null;
  ownerInstance: string;
  maxDurationSeconds: number;
  idleTimeoutSeconds: number;
  /** A phone call's caller number (E.164); null for every other source. */
  callerNumber?: string | null;
}

/** A conversation for the call's transcript (the knowledge capability's table; source api | widget | playground). */
export async function insertConversation(
  sql: Db,
  row: {
    id: string;
    assistantId: string;
    accountId: string;
    visitorId: string | null;
    source: VoiceSource;
    callerNumber?: string | null | undefined;
  },
): Promise<void> {
  await sql`
    insert into conversations (id, assistant_id, account_id, visitor_id, source, caller_number)
    values (${row.id}, ${row.assistantId}, ${row.accountId}, ${row.visitorId}, ${row.source}, ${row.callerNumber ?? null})`;
}

/** An existing conversation of this assistant the caller may continue (bearer: same account; keyless: same visitor). */
export async function findConversation(
  sql: Db,
  id: string,
  assistantId: string,
): Promise<{ id: string; visitorId: string | null; source: string } | undefined> {
  const [row] = await sql<{ id: string; visitorId: string | null; source: string }[]>`
    select id, visitor_id, source from conversations where id = ${id} and assistant_id = ${assistantId}`;
  return row;
}

export async function insertActiveSession(sql: Db, s: NewVoiceSession): Promise<void> {
  await sql`
    insert into voice_sessions (id, account_id, assistant_id, conversation_id, api_key_id, source, visitor_id, state, capabilities,
      recording_enabled, recording_consent, provider, provider_session_id, owner_instance, owner_generation,
      max_duration_seconds, idle_timeout_seconds, started_at, caller_number)
    values (${s.id}, ${s.accountId}, ${s.assistantId}, ${s.conversationId}, ${s.apiKeyId}, ${s.source}, ${s.visitorId}, 'active',
      ${sql.array(s.capabilities)}, ${s.recordingEnabled}, ${s.recordingConsent}, ${s.provider}, ${s.providerSessionId},
      ${s.ownerInstance}, 1, ${s.maxDurationSeconds}, ${s.idleTimeoutSeconds}, now(), ${s.callerNumber ?? null})`;
}

/** A mint the provider did not confirm: kept for the owner's records, never billed. */
export async function insertFailedSession(sql: Db, s: NewVoiceSession & { failureCode: string }): Promise<void> {
  await sql`
    insert into voice_sessions (id, account_id, assistant_id, conversation_id, api_key_id, source, visitor_id, state, end_reason,
      ended_by, capabilities, recording_enabled, recording_consent, provider, failure_code, owner_instance, max_duration_seconds,
      idle_timeout_seconds, ended_at)
    values (${s.id}, ${s.accountId}, ${s.assistantId}, null, ${s.apiKeyId}, ${s.source}, ${s.visitorId}, 'failed', 'voice_unavailable',
      'service', ${sql.array(s.capabilities)}, ${s.recordingEnabled}, ${s.recordingConsent}, ${s.provider}, ${s.failureCode},
      ${s.ownerInstance}, ${s.maxDurationSeconds}, ${s.idleTimeoutSeconds}, now())`;
}

export async function findSession(sql: Db, id: string): Promise<VoiceSessionRow | undefined> {
  const [row] = await sql<VoiceSessionRow[]>`select ${sql.unsafe(COLUMNS)} from voice_sessions where id = ${id}`;
  return row;
}

/**
 * Settle an active session exactly once: the update only matches while the row is active and still carries the
 * generation the settler knows (fencing). Returns the settled row, or undefined when someone else settled first.
 *
 * The owner settles with `ownerInstance`: then the row may be at a later generation than the owner holds (only an
 * active row's owner bumps it: re-assertions of its own whose answers were lost, which can still land after the
 * owner read the row), the same fence as renewSessions. A reaper settles at the exact generation it read.
 */
export async function settleSession(
  sql: Db,
  s: {
    id: string;
    generation: number;
    ownerInstance?: string;
    state: 'ended' | 'lost';
    endReason: EndReason;
    endedBy: 'client' | 'service' | 'reaper';
    usageSeconds: number;
    billableSeconds: number;
    usageFinalized: boolean;
  },
): Promise<VoiceSessionRow | undefined> {
  const [row] = await sql<VoiceSessionRow[]>`
    update voice_sessions
    set state = ${s.state}, end_reason = ${s.endReason}, ended_by = ${s.endedBy}, ended_at = now(),
        usage_seconds = ${s.usageSeconds}, billable_seconds = ${s.billableSeconds}, usage_finalized = ${s.usageFinalized},
        owner_generation = owner_generation + ${s.endedBy === 'reaper' ? 1 : 0}
    where id = ${s.id} and state = 'active' and ${
      s.ownerInstance === undefined
        ? sql`owner_generation = ${s.generation}`
        : sql`owner_instance = ${s.ownerInstance} and owner_generation >= ${s.generation}`
    }
    returning ${sql.unsafe(COLUMNS)}`;
  return row;
}

/**
 * One statement per liveness tick for every session this instance owns: liveness and the last usage seen. Matches
 * only rows still active, owned by this instance, at the generation the owner holds or a later one (only an active
 * row's owner bumps its generation: a re-assertion whose answer was lost). Returns the generation of each matched id;
 * an owned id missing from the answer was settled or taken over elsewhere (its owner must stop acting).
 */
export async function renewSessions(
  sql: Db,
  instanceId: string,
  ids: string[],
  usageSeconds: number[],
  generations: number[],
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; ownerGeneration: number }[]>`
    update voice_sessions v
    set renewed_at = now(), usage_seconds = x.usage
    from unnest(${sql.array(ids)}::text[], ${sql.array(usageSeconds)}::float8[], ${sql.array(generations)}::int[]) as x(id, usage, gen)
    where v.id = x.id and v.state = 'active' and v.owner_instance = ${instanceId} and v.owner_generation >= x.gen
    returning v.id, v.owner_generation`;
  return new Map(rows.map((r) => [r.id, r.ownerGeneration]));
}

/**
 * The owner lost its store record (the store restarted empty, or the record expired during an outage) and still runs
 * the call: take the next generation in the database, the fleet's referee. Only matches while the row is active, owned
 * by this instance and still at the generation the owner holds (a reaper that settled it bumped the generation), so
 * at most one owner ever holds a generation. Returns the new generation, or undefined when the session is no longer ours.
 */
export async function reassertOwner(
  sql: Db,
  id: string,
  instanceId: string,
  generation: number,
): Promise<number | undefined> {
  const [row] = await sql<{ ownerGeneration: number }[]>`
    update voice_sessions set owner_generation = owner_generation + 1, renewed_at = now()
    where id = ${id} and state = 'active' and owner_instance = ${instanceId} and owner_generation >= ${generation}
    returning owner_generation`;
  return row?.ownerGeneration;
}

/** Active sessions whose owner has not renewed for `staleMs`: candidates for the orphan check. */
export async function findStaleActive(sql: Db, staleMs: number, limit: number): Promise<VoiceSessionRow[]> {
  return sql<VoiceSessionRow[]>`
    select ${sql.unsafe(COLUMNS)} from voice_sessions
    where state = 'active' and renewed_at < now() - make_interval(secs => ${staleMs / 1000})
    order by renewed_at
    limit ${limit}`;
}

/**
 * A transcript turn as a conversation message (and the conversation's count), in one statement. Idempotent by the
 * message id: a retry after an answer lost with the connection (the first attempt did commit) changes nothing.
 */
export async function insertTurn(
  sql: Sql,
  m: {
    id: string;
    conversationId: string;
    assistantId: string;
    role: 'user' | 'assistant';
    content: string;
    inReplyTo: string | null;
    outcome: 'answered' | 'no_answer' | null;
    sources: TurnSource[];
    provider: string;
    model: string | null;
  },
): Promise<void> {
  await sql`
    with inserted as (
      insert into messages (id, conversation_id, assistant_id, role, content, in_reply_to, outcome, sources, provider, model)
      values (${m.id}, ${m.conversationId}, ${m.assistantId}, ${m.role}, ${m.content}, ${m.inReplyTo}, ${m.outcome},
              ${sql.json(m.sources as never)}, ${m.provider}, ${m.model})
      on conflict (id) do nothing
      returning id
    )
    update conversations set message_count = message_count + 1
    where id = ${m.conversationId} and exists (select 1 from inserted)`;
}

/** Of these sessions, the ones still linked to a conversation (their recordings may be kept). */
export async function sessionsWithConversation(sql: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    select id from voice_sessions where id = any(${sql.array(ids)}::text[]) and conversation_id is not null`;
  return rows.map((r) => r.id);
}

/** Of these sessions, the ones still active somewhere in the fleet. */
export async function activeSessionIds(sql: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    select id from voice_sessions where id = any(${sql.array(ids)}::text[]) and state = 'active'`;
  return rows.map((r) => r.id);
}

/** A recorded session of this assistant that still belongs to a conversation (the recording route's check). */
export async function findRecordedSession(
  sql: Db,
  id: string,
  assistantId: string,
): Promise<{ id: string; conversationId: string; state: VoiceSessionRow['state'] } | undefined> {
  const [row] = await sql<{ id: string; conversationId: string; state: VoiceSessionRow['state'] }[]>`
    select id, conversation_id, state from voice_sessions
    where id = ${id} and assistant_id = ${assistantId} and conversation_id is not null
      and recording_enabled and recording_consent and recording_expired_at is null`;
  return row;
}

/** The recorded sessions of a conversation (for listing its recordings). */
export async function recordedSessionsOf(
  sql: Db,
  conversationId: string,
): Promise<Array<{ id: string; assistantId: string; state: VoiceSessionRow['state'] }>> {
  return sql<Array<{ id: string; assistantId: string; state: VoiceSessionRow['state'] }>>`
    select id, assistant_id, state from voice_sessions
    where conversation_id = ${conversationId} and recording_enabled and recording_consent
      and recording_expired_at is null
    order by created_at`;
}

/**
 * What callers of this assistant are likely to talk about, for a recognizer that can be biased towards it (the
 * local voice): the text of its documents, in order, at most `maxChars`.
 */
export async function speechHintsOf(sql: Db, assistantId: string, maxChars: number): Promise<string> {
  const rows = await sql<Array<{ hints: string | null }>>`
    select left(string_agg(content, E'\n' order by document_id, ordinal), ${maxChars}) as hints
    from (select document_id, ordinal, content from document_chunks where assistant_id = ${assistantId}
          order by document_id, ordinal limit 2000) c`;
  return rows[0]?.hints ?? '';
}

/** What a survivor needs to take a WebRTC call over from its dead owner (session/takeover.ts). */
export interface TakeoverRow extends VoiceSessionRow {
  capabilities: string[];
  recordingEnabled: boolean;
  recordingConsent: boolean;
  maxDurationSeconds: number;
  idleTimeoutSeconds: number;
  startedAt: Date;
}

export async function findTakeoverRow(sql: Db, id: string): Promise<TakeoverRow | undefined> {
  const [row] = await sql<TakeoverRow[]>`
    select ${sql.unsafe(COLUMNS)}, capabilities, recording_enabled, recording_consent, max_duration_seconds,
      idle_timeout_seconds, started_at
    from voice_sessions where id = ${id}`;
  return row;
}

/** Instances other than `instanceId` that own active calls (the takeover loop asks which of them are gone). */
export async function activeOwnersBesides(sql: Db, instanceId: string): Promise<string[]> {
  const rows = await sql<{ ownerInstance: string }[]>`
    select distinct owner_instance from voice_sessions where state = 'active' and owner_instance <> ${instanceId}`;
  return rows.map((r) => r.ownerInstance);
}

export async function activeSessionsOf(sql: Db, ownerInstance: string, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from voice_sessions where state = 'active' and owner_instance = ${ownerInstance} limit ${limit}`;
  return rows.map((r) => r.id);
}

/**
 * Take an active call over from a dead owner: the row moves to `instanceId` at the next generation, only while it is
 * still active, still the dead owner's and at the generation read (one survivor wins; the old owner, should it come
 * back, is fenced). Returns the new generation, or undefined when someone else settled or took it first.
 */
export async function takeOverSession(
  sql: Db,
  id: string,
  instanceId: string,
  from: { ownerInstance: string; generation: number },
): Promise<number | undefined> {
  const [row] = await sql<{ ownerGeneration: number }[]>`
    update voice_sessions set owner_instance = ${instanceId}, owner_generation = owner_generation + 1, renewed_at = now()
    where id = ${id} and state = 'active' and owner_instance = ${from.ownerInstance}
      and owner_generation = ${from.generation}
    returning owner_generation`;
  return row?.ownerGeneration;
}

/** The last turns stored in a conversation (a takeover skips the provider's replay of what is already there). */
export async function recentTurns(
  sql: Db,
  conversationId: string,
  limit: number,
): Promise<{ role: string; content: string }[]> {
  return sql<{ role: string; content: string }[]>`
    select role, content from messages where conversation_id = ${conversationId}
    order by created_at desc limit ${limit}`;
}
