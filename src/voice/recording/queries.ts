import type { Sql, TransactionSql } from '../../db/index.js';

type Db = Sql | TransactionSql;

/** A session of this account's conversation, recorded with consent (for minting a signed link). */
export async function recordedSessionOfConversation(
  sql: Db,
  accountId: string,
  conversationId: string,
  sessionId: string,
): Promise<{ id: string } | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select vs.id from voice_sessions vs join conversations c on c.id = vs.conversation_id
    where vs.id = ${sessionId} and c.id = ${conversationId} and c.account_id = ${accountId}
      and vs.recording_enabled and vs.recording_consent and vs.recording_expired_at is null`;
  return row;
}

/** A session recorded with consent that still belongs to a conversation (what a signed link may play). */
export async function linkedRecordedSession(sql: Db, sessionId: string): Promise<{ id: string } | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from voice_sessions
    where id = ${sessionId} and conversation_id is not null and recording_enabled and recording_consent
      and recording_expired_at is null`;
  return row;
}

/** The last session of a conversation recorded with consent (the one an end-of-call report links). */
export async function lastRecordedSessionOf(sql: Db, conversationId: string): Promise<{ id: string } | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from voice_sessions
    where conversation_id = ${conversationId} and recording_enabled and recording_consent and recording_expired_at is null
    order by created_at desc limit 1`;
  return row;
}

/**
 * Recorded calls past their assistant's retention (settings.voice.recordingRetentionDays), not yet expired, oldest
 * first, at most `limit` (one sweep's batch).
 */
export async function recordingsPastRetention(sql: Db, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select vs.id from voice_sessions vs join assistants a on a.id = vs.assistant_id
    where vs.recording_enabled and vs.recording_consent and vs.recording_expired_at is null
      and vs.ended_at is not null and vs.state <> 'active'
      and jsonb_typeof(a.settings -> 'voice' -> 'recordingRetentionDays') = 'number'
      and vs.ended_at < now() - ((a.settings -> 'voice' ->> 'recordingRetentionDays')::int * interval '1 day')
    order by vs.ended_at
    limit ${limit}`;
  return rows.map((r) => r.id);
}

/** Mark a call's recording as deleted by retention (no route lists or plays it again). */
export async function markRecordingExpired(sql: Db, sessionId: string): Promise<void> {
  await sql`update voice_sessions set recording_expired_at = now() where id = ${sessionId}`;
}
