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
      and vs.recording_enabled and vs.recording_consent`;
  return row;
}

/** A session recorded with consent that still belongs to a conversation (what a signed link may play). */
export async function linkedRecordedSession(sql: Db, sessionId: string): Promise<{ id: string } | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from voice_sessions
    where id = ${sessionId} and conversation_id is not null and recording_enabled and recording_consent`;
  return row;
}

/** The last session of a conversation recorded with consent (the one an end-of-call report links). */
export async function lastRecordedSessionOf(sql: Db, conversationId: string): Promise<{ id: string } | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from voice_sessions
    where conversation_id = ${conversationId} and recording_enabled and recording_consent
    order by created_at desc limit 1`;
  return row;
}
