import type { OwnerPrincipal } from '../auth/principal.js';
import { decodeCursor, getOwnedAssistant, hasIdShape, pageOf } from '../assistants/index.js';
import type { Sql, TransactionSql } from '../db/index.js';
import { conversationErrors } from './errors.js';
import * as q from './queries.js';

type Owner = Pick<OwnerPrincipal, 'accountId'>;

export function presentMessage(row: q.RatedMessageRow) {
  return {
    id: row.id,
    role: row.role,
    content: row.content,
    outcome: row.outcome,
    sources: row.sources,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    costMicros: row.costMicros,
    feedback: row.feedback,
    createdAt: row.createdAt.toISOString(),
  };
}

export async function getConversation(sql: Sql, owner: Owner, conversationId: string) {
  const row = hasIdShape('conv', conversationId)
    ? await q.findOwnedConversation(sql, owner.accountId, conversationId)
    : undefined;
  if (!row) throw conversationErrors.notFound();
  return { conversation: row, messages: await q.messagesOf(sql, row.id) };
}

/** One stored exchange: the user's message and the assistant's answer (chat writes both in one transaction). */
export interface Exchange {
  conversation: {
    id: string;
    assistantId: string;
    accountId: string;
    visitorId: string | null;
    source: q.ConversationSource;
  };
  user: { id: string; content: string };
  answer: {
    id: string;
    content: string;
    outcome: q.Outcome;
    sources: q.StoredSource[];
    provider: string;
    model: string;
    inputTokens: number;
    outputTokens: number;
    costMicros: number;
  };
}

export async function recordExchange(tx: TransactionSql, exchange: Exchange): Promise<void> {
  const { conversation, user, answer } = exchange;
  const base = { conversationId: conversation.id, assistantId: conversation.assistantId };
  // Pipelined (one round trip instead of four): the four statements go out together and run in this order on the one
  // transaction connection (the conversation before its messages, the question before its answer): one round trip, not
  // four.
  await Promise.all([
    q.ensureConversation(tx, conversation),
    q.insertMessage(tx, {
      ...base,
      id: user.id,
      role: 'user',
      content: user.content,
      inReplyTo: null,
      outcome: null,
      sources: [],
      provider: null,
      model: null,
      inputTokens: 0,
      outputTokens: 0,
      costMicros: 0,
    }),
    q.insertMessage(tx, { ...base, role: 'assistant', inReplyTo: user.id, ...answer }),
    q.bumpMessageCount(tx, conversation.id, 2),
  ]);
}

/**
 * Whether a keyless caller (widget visitor) may reach a conversation or its messages: only its own visitor's, started
 * from the widget or playground widget. Never an API conversation, one without a visitor, or another visitor's
 * (without this check, a keyless chat, voice mint or feedback naming an API conversation's id would reach it).
 */
export function isVisitorsOwnConversation(
  row: { visitorId: string | null; source: string },
  visitorId: string | null,
): boolean {
  return visitorId !== null && row.visitorId === visitorId && row.source !== 'api';
}

/** A conversation the chat may continue: same assistant, and for keyless callers (visitorId not undefined) the visitor's own. */
export async function findContinuableConversation(
  sql: Sql,
  id: string,
  assistantId: string,
  visitorId: string | null | undefined,
): Promise<q.ConversationRow | undefined> {
  if (!hasIdShape('conv', id)) return undefined;
  const row = await q.findConversation(sql, id);
  if (!row || row.assistantId !== assistantId) return undefined;
  if (visitorId !== undefined && !isVisitorsOwnConversation(row, visitorId)) return undefined;
  return row;
}

export { recentMessages, findFeedbackTarget, upsertFeedback } from './queries.js';
