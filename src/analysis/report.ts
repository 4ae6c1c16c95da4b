import type { Sql, TransactionSql } from '../db/index.js';
import * as q from './queries.js';
import type { AnalysisView } from './schemas.js';
import type { TranscriptMessage } from './types.js';

/** The most messages a report (and an analysis) reads; a longer conversation's report says it was cut. */
export const TRANSCRIPT_LIMIT = 1000;

export function presentAnalysis(row: q.AnalysisRow): AnalysisView {
  const r = row.result;
  return {
    conversationId: row.conversationId,
    status: row.status,
    trigger: row.trigger,
    settingsVersion: row.settingsVersion,
    requestedAt: row.requestedAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
    engine: r?.engine ?? null,
    model: r?.model ?? null,
    summary: r?.summary ?? null,
    structuredData: r?.structuredData ?? null,
    successEvaluation: r?.successEvaluation ?? null,
    sentiment: r?.sentiment ?? null,
    steps: r?.steps ?? [],
    costMicros: r?.costMicros ?? 0,
  };
}

const seconds = (from: Date, to: Date) => Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000));

/** A signed, expiring link to a conversation's recording, or null when it has none (supplied by voice). */
export type RecordingLinkOf = (
  sql: Sql | TransactionSql,
  conversationId: string,
) => Promise<{ url: string; expiresAt: string } | null>;

/**
 * The end-of-call report the conversation.analyzed webhook carries: who and what, when, how long, what it cost, how
 * it ended, the transcript, the tool calls the assistant made, the analysis and, when the call was recorded, `recordingUrl`: a signed link that plays
 * without credentials until `recordingUrlExpiresAt` (RECORDING_URL_TTL_SECONDS).
 */
export async function endOfCallReport(
  sql: Sql | TransactionSql,
  conversation: q.ConversationFacts,
  transcript: TranscriptMessage[],
  analysis: AnalysisView,
  recordingLinkOf?: RecordingLinkOf,
) {
  const [calls, toolCalls] = await Promise.all([q.callsOf(sql, conversation.id), q.toolCallsOf(sql, conversation.id)]);
  const recording = recordingLinkOf === undefined ? null : await recordingLinkOf(sql, conversation.id);
  const last = calls.at(-1);
  const voice = last !== undefined;
  const endedAt = voice
    ? new Date(Math.max(...calls.map((c) => (c.endedAt ?? c.startedAt ?? conversation.createdAt).getTime())))
    : (conversation.lastMessageAt ?? conversation.createdAt);
  const fault = voice
    ? (last.failureCode ?? (last.state === 'lost' ? 'session_lost' : null))
    : transcript.some((m) => m.outcome === 'model_failure')
      ? 'model_failure'
      : null;
  return {
    conversationId: conversation.id,
    assistantId: conversation.assistantId,
    channel: voice ? 'voice' : 'chat',
    source: conversation.source,
    startedAt: conversation.createdAt.toISOString(),
    endedAt: endedAt.toISOString(),
    durationSeconds: seconds(conversation.createdAt, endedAt),
    billableSeconds: calls.reduce((sum, c) => sum + c.billableSeconds, 0),
    costMicros: conversation.chatCostMicros + calls.reduce((sum, c) => sum + c.costMicros, 0),
    endReason: voice ? last.endReason : 'idle',
    endedBy: voice ? last.endedBy : null,
    fault,
    calls: calls.map((c) => ({
      sessionId: c.id,
      startedAt: c.startedAt?.toISOString() ?? null,
      endedAt: c.endedAt?.toISOString() ?? null,
      billableSeconds: c.billableSeconds,
      costMicros: c.costMicros,
      endReason: c.endReason,
      endedBy: c.endedBy,
    })),
    transcript: transcript.map((m) => ({ role: m.role, content: m.content, at: m.at.toISOString() })),
    transcriptTruncated: transcript.length >= TRANSCRIPT_LIMIT,
    toolCalls: toolCalls.map((c) => ({
      id: c.id,
      name: c.name,
      arguments: c.arguments,
      status: c.status,
      result: c.result ?? null,
      error: c.error,
      durationMs: c.durationMs,
      at: c.createdAt.toISOString(),
    })),
    analysis,
    ...(recording !== null ? { recordingUrl: recording.url, recordingUrlExpiresAt: recording.expiresAt } : {}),
  };
}
