import type { PageCursor } from '../assistants/index.js';
import type { Sql, TransactionSql } from '../db/index.js';

type Db = Sql | TransactionSql;

export type ConversationSource = 'api' | 'widget' | 'playground' | 'phone' | 'test';
export type Outcome = 'answered' | 'no_answer' | 'model_failure';

export interface ConversationRow {
  id: string;
  assistantId: string;
  accountId: string;
  visitorId: string | null;
  source: ConversationSource;
  messageCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredSource {
  documentId: string;
  name: string;
  snippet: string;
  score: number;
}

export interface MessageRow {
  id: string;
  conversationId: string;
  assistantId: string;
  role: 'user' | 'assistant';
  content: string;
  inReplyTo: string | null;
  outcome: Outcome | null;
  sources: StoredSource[];
  provider: string | null;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  createdAt: Date;
}

/** A message with its rating (answers only), as the owner's conversation view shows it. */
export interface RatedMessageRow extends MessageRow {
  feedback: 'positive' | 'negative' | null;
}

const CONVERSATION = 'id, assistant_id, account_id, visitor_id, source, message_count, created_at, updated_at';
const MESSAGE =
  'id, conversation_id, assistant_id, role, content, in_reply_to, outcome, sources, provider, model, input_tokens, output_tokens, cost_micros, created_at';
const MESSAGE_OF_M = MESSAGE.split(', ')
  .map((c) => `m.${c}`)
  .join(', ');

export async function findConversation(sql: Db, id: string): Promise<ConversationRow | undefined> {
  const [row] = await sql<ConversationRow[]>`select ${sql.unsafe(CONVERSATION)} from conversations where id = ${id}`;
  return row;
}

export async function findOwnedConversation(
  sql: Db,
  accountId: string,
  id: string,
): Promise<ConversationRow | undefined> {
  const [row] = await sql<
    ConversationRow[]
  >`select ${sql.unsafe(CONVERSATION)} from conversations where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** Creates the conversation if it does not exist yet (the first exchange creates it). */
export async function ensureConversation(
  sql: Db,
  row: { id: string; assistantId: string; accountId: string; visitorId: string | null; source: ConversationSource },
): Promise<void> {
  await sql`
    insert into conversations (id, assistant_id, account_id, visitor_id, source)
    values (${row.id}, ${row.assistantId}, ${row.accountId}, ${row.visitorId}, ${row.source})
    on conflict (id) do nothing`;
}

export async function insertMessage(
  sql: Db,
  m: Omit<MessageRow, 'createdAt' | 'sources'> & { sources: StoredSource[] },
): Promise<void> {
  await sql`
    insert into messages (id, conversation_id, assistant_id, role, content, in_reply_to, outcome, sources, provider, model,
                          input_tokens, output_tokens, cost_micros)
    values (${m.id}, ${m.conversationId}, ${m.assistantId}, ${m.role}, ${m.content}, ${m.inReplyTo}, ${m.outcome},
            ${sql.json(m.sources as never)}, ${m.provider}, ${m.model}, ${m.inputTokens}, ${m.outputTokens}, ${m.costMicros})`;
}

export async function bumpMessageCount(sql: Db, conversationId: string, by: number): Promise<void> {
  await sql`update conversations set message_count = message_count + ${by} where id = ${conversationId}`;
}

/** The last `limit` messages, oldest first (chat history for the provider). */
export async function recentMessages(
  sql: Db,
  conversationId: string,
  limit: number,
): Promise<Array<Pick<MessageRow, 'role' | 'content'>>> {
  const rows = await sql<Array<Pick<MessageRow, 'role' | 'content'>>>`
    select role, content from (
      select role, content, seq from messages where conversation_id = ${conversationId}
      order by seq desc limit ${limit}) m
    order by seq asc`;
  return rows;
}

export async function listPage(
  sql: Db,
  filter: { accountId: string; assistantId?: string | undefined },
  after: PageCursor | undefined,
  limit: number,
): Promise<ConversationRow[]> {
  return sql<ConversationRow[]>`
    select ${sql.unsafe(CONVERSATION)} from conversations
    where account_id = ${filter.accountId}
      ${filter.assistantId !== undefined ? sql`and assistant_id = ${filter.assistantId}` : sql``}
      ${after ? sql`and (created_at, id) < (${after.createdAt}, ${after.id})` : sql``}
    order by created_at desc, id desc limit ${limit + 1}`;
}

export async function messagesOf(sql: Db, conversationId: string): Promise<RatedMessageRow[]> {
  return sql<RatedMessageRow[]>`
    select ${sql.unsafe(MESSAGE_OF_M)}, f.rating as feedback
    from messages m left join message_feedback f on f.message_id = m.id
    where m.conversation_id = ${conversationId} order by m.seq asc`;
}

export interface FeedbackTarget {
  id: string;
  assistantId: string;
  role: 'user' | 'assistant';
  visitorId: string | null;
  source: ConversationSource;
}

export async function findFeedbackTarget(sql: Db, messageId: string): Promise<FeedbackTarget | undefined> {
  const [row] = await sql<FeedbackTarget[]>`
    select m.id, m.assistant_id, m.role, c.visitor_id, c.source
    from messages m join conversations c on c.id = m.conversation_id where m.id = ${messageId}`;
  return row;
}

export interface FeedbackRow {
  messageId: string;
  rating: 'positive' | 'negative';
  createdAt: Date;
  updatedAt: Date;
}

export async function upsertFeedback(
  sql: Db,
  f: { messageId: string; assistantId: string; rating: 'positive' | 'negative'; visitorId: string | null },
): Promise<FeedbackRow> {
  const [row] = await sql<FeedbackRow[]>`
    insert into message_feedback (message_id, assistant_id, rating, visitor_id)
    values (${f.messageId}, ${f.assistantId}, ${f.rating}, ${f.visitorId})
    on conflict (message_id) do update set rating = excluded.rating, visitor_id = excluded.visitor_id
    returning message_id, rating, created_at, updated_at`;
  return row!;
}
