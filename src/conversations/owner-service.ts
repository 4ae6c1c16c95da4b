import { createHash } from 'node:crypto';
import type { OwnerPrincipal } from '../auth/principal.js';
import { writeAuditLog } from '../audit/index.js';
import { decodeCursor, getOwnedAssistant, pageOf } from '../assistants/index.js';
import type { Sql } from '../db/index.js';
import { conversationErrors } from './errors.js';
import * as lq from './list-queries.js';
import type { ConversationSource, Outcome, RatedMessageRow } from './queries.js';
import { getConversation, presentMessage } from './service.js';

type Owner = Pick<OwnerPrincipal, 'accountId'>;

/**
 * A label a person can tell apart and say aloud instead of a raw `v_<uuid>`: the same visitor always gets the same
 * one ("Visitor K7QM"); API conversations without a visitor read "API caller", the owner's own tests "Playground".
 */
export function visitorLabelOf(visitorId: string | null, source: ConversationSource): string {
  if (source === 'phone') return 'Phone caller';
  if (visitorId === null) return source === 'playground' ? 'Playground' : 'API caller';
  const digest = createHash('sha256').update(visitorId).digest();
  const alphabet = 'ABCDEFGHJKMNPQRSTVWXYZ23456789'; // no 0/O, 1/I/L, U
  let label = '';
  for (let i = 0; i < 4; i++) label += alphabet[digest[i]! % alphabet.length];
  return `${source === 'playground' ? 'Playground visitor' : 'Visitor'} ${label}`;
}

/**
 * A phone caller's number as lists show it: the country code, the area code (NANP) or first digits, and the last
 * four, the rest hidden ("+1 555 ••• 0123"); enough to tell callers apart, not to call them back.
 */
export function maskCallerNumber(number: string): string {
  const digits = number.replace(/[^0-9]/g, '');
  if (digits.length < 7) return '•••';
  const last = digits.slice(-4);
  if (digits.length === 11 && digits.startsWith('1')) return `+1 ${digits.slice(1, 4)} ••• ${last}`;
  return `+${digits.slice(0, 2)} ••• ${last}`;
}

function presentAnalysisBrief(row: lq.ConversationListRow) {
  if (!row.analysed) return null;
  return {
    summary: row.analysisSummary,
    success: row.analysisSuccess,
    verdict: row.analysisVerdict,
    sentiment: row.analysisSentiment,
    structuredData: row.analysisData,
  };
}

export function presentSummary(row: lq.ConversationListRow) {
  const last = row.lastActivityAt ?? row.updatedAt;
  return {
    id: row.id,
    assistantId: row.assistantId,
    visitorId: row.visitorId,
    visitorLabel: visitorLabelOf(row.visitorId, row.source),
    source: row.source,
    callerNumber: row.callerNumber === null ? null : maskCallerNumber(row.callerNumber),
    channel: (row.callCount > 0 ? 'voice' : 'chat') as lq.Channel,
    callCount: row.callCount,
    messageCount: row.messageCount,
    firstMessage: row.firstMessage,
    outcome: row.outcome,
    startedAt: row.createdAt.toISOString(),
    durationSeconds: Math.max(0, Math.round((last.getTime() - row.createdAt.getTime()) / 1000)),
    costMicros: Number(row.chatCostMicros) + Number(row.voiceCostMicros),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    analysis: presentAnalysisBrief(row),
  };
}

export interface ListQuery {
  assistantId?: string | undefined;
  limit: number;
  cursor?: string | undefined;
  channel?: lq.Channel | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  outcome?: Outcome | undefined;
  q?: string | undefined;
  visitorId?: string | undefined;
  success?: 'pass' | 'fail' | undefined;
  scoreMin?: number | undefined;
  scoreMax?: number | undefined;
  sentiment?: 'positive' | 'neutral' | 'negative' | undefined;
  dataField?: string | undefined;
  dataValue?: string | undefined;
}

export async function searchConversations(sql: Sql, owner: Owner, query: ListQuery) {
  if (query.scoreMin !== undefined && query.scoreMax !== undefined && query.scoreMin > query.scoreMax) {
    throw conversationErrors.filterInvalid('scoreMax', 'scoreMax must not be below scoreMin.');
  }
  const assistant =
    query.assistantId !== undefined ? await getOwnedAssistant(sql, owner, query.assistantId) : undefined;
  const text = query.q?.trim();
  const rows = await lq.summaryPage(
    sql,
    {
      accountId: owner.accountId,
      assistantId: assistant?.id,
      channel: query.channel,
      from: query.from,
      to: query.to,
      outcome: query.outcome,
      text: text === '' ? undefined : text,
      visitorId: query.visitorId,
      success: query.success,
      scoreMin: query.scoreMin,
      scoreMax: query.scoreMax,
      sentiment: query.sentiment,
      dataField: query.dataField,
      dataValue: query.dataValue?.trim() || undefined,
    },
    decodeCursor(query.cursor),
    query.limit,
  );
  const { items, nextCursor } = pageOf(rows, query.limit);
  return { conversations: items.map(presentSummary), nextCursor };
}

/** One summary, the way the list shows it (the detail and the export start with it). */
export async function summaryOf(sql: Sql, owner: Owner, conversationId: string) {
  const found = await getConversation(sql, owner, conversationId);
  const [row] = await lq.summaryPage(sql, { accountId: owner.accountId, id: found.conversation.id }, undefined, 1);
  if (!row) throw conversationErrors.notFound();
  return { summary: presentSummary(row), messages: found.messages };
}

/** What each voice call of a conversation cost (from the usage ledger), by session id. */
export function voiceCallCosts(sql: Sql, conversationId: string): Promise<Map<string, number>> {
  return lq.voiceCallCosts(sql, conversationId);
}

/** The documents a conversation's answers cited, each once, with how often. */
export function citedSources(messages: Array<Pick<RatedMessageRow, 'sources'>>) {
  const byId = new Map<string, { documentId: string; name: string; citations: number }>();
  for (const m of messages) {
    for (const s of m.sources) {
      const seen = byId.get(s.documentId);
      if (seen) seen.citations++;
      else byId.set(s.documentId, { documentId: s.documentId, name: s.name, citations: 1 });
    }
  }
  return [...byId.values()];
}

export { presentMessage };

export interface Eraser {
  /** Deletes a voice session's recording files now; true when there was one. */
  removeRecording(sessionId: string): Promise<boolean>;
}

export interface ErasureResult {
  conversations: number;
  messages: number;
  feedback: number;
  calls: number;
  recordings: number;
}

/**
 * Deletes conversations for good: messages, feedback, the visitor id on their calls, and the calls' recordings on
 * disk; one audit row says who did it and how much went. A conversation with a call still running is refused (409):
 * end the call first, or its recording would be written after the erasure.
 */
async function erase(
  sql: Sql,
  owner: Owner & { actorUserId: string | null; requestId: string },
  eraser: Eraser,
  conversationIds: string[],
  audit: { action: string; targetType: string; targetId: string },
  visitorId?: string,
): Promise<ErasureResult> {
  const sessions = await lq.sessionsOf(sql, conversationIds);
  if (sessions.some((s) => s.state === 'active')) throw conversationErrors.callActive();
  const counts = await sql.begin(async (tx) => {
    const erased = await lq.eraseConversations(tx, owner.accountId, conversationIds);
    const forgotten = visitorId === undefined ? 0 : await lq.forgetVisitorSessions(tx, owner.accountId, visitorId);
    const result = { ...erased, calls: erased.calls + forgotten };
    await writeAuditLog(tx, {
      actorUserId: owner.actorUserId,
      action: audit.action,
      targetType: audit.targetType,
      targetId: audit.targetId,
      after: result,
      requestId: owner.requestId,
    });
    return result;
  });
  let recordings = 0;
  for (const s of sessions) if (await eraser.removeRecording(s.id)) recordings++;
  return { ...counts, recordings };
}

export async function deleteConversation(
  sql: Sql,
  owner: Owner & { actorUserId: string | null; requestId: string },
  eraser: Eraser,
  conversationId: string,
): Promise<ErasureResult> {
  const found = await getConversation(sql, owner, conversationId);
  return erase(sql, owner, eraser, [found.conversation.id], {
    action: 'conversation.deleted',
    targetType: 'conversation',
    targetId: found.conversation.id,
  });
}

/** Everything about one visitor of this account (a privacy request): their conversations, calls and recordings. */
export async function deleteVisitorData(
  sql: Sql,
  owner: Owner & { actorUserId: string | null; requestId: string },
  eraser: Eraser,
  visitorId: string,
): Promise<ErasureResult> {
  const ids = await lq.conversationIdsOfVisitor(sql, owner.accountId, visitorId);
  // The audit row names the visitor by its label, not its id: the id is what was asked to be forgotten.
  return erase(
    sql,
    owner,
    eraser,
    ids,
    { action: 'visitor.data_deleted', targetType: 'visitor', targetId: visitorLabelOf(visitorId, 'widget') },
    visitorId,
  );
}
