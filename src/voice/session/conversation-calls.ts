import type { Sql } from '../../db/index.js';

/** One voice call of a conversation, as its owner sees it in the transcript (the real end reason, not the widget's). */
export interface ConversationCall {
  sessionId: string;
  source: 'api' | 'widget' | 'playground' | 'phone' | 'test';
  state: 'active' | 'ended' | 'lost';
  /** Null: the caller hung up (or the call still runs). */
  endReason: string | null;
  startedAt: string;
  endedAt: string | null;
  /** Wall time from the start (the caller joining) to the end; null while the call runs. */
  durationSeconds: number | null;
  billableSeconds: number;
  /** What happened in the call, turn by turn (GET, conversations:read). */
  timelineUrl: string;
}

interface CallRow {
  id: string;
  source: ConversationCall['source'];
  state: ConversationCall['state'];
  endReason: string | null;
  startedAt: Date;
  endedAt: Date | null;
  billableSeconds: number;
}

/** The voice calls of one conversation, oldest first; mints that failed (nothing happened, nothing billed) are left out. */
export async function voiceCallsOf(sql: Sql, conversationId: string): Promise<ConversationCall[]> {
  const rows = await sql<CallRow[]>`
    select id, source, state, end_reason, coalesce(started_at, created_at) as started_at, ended_at, billable_seconds
    from voice_sessions
    where conversation_id = ${conversationId} and state <> 'failed'
    order by created_at, id`;
  return rows.map((r) => ({
    sessionId: r.id,
    source: r.source,
    state: r.state,
    endReason: r.endReason,
    startedAt: r.startedAt.toISOString(),
    endedAt: r.endedAt?.toISOString() ?? null,
    durationSeconds:
      r.endedAt === null ? null : Math.max(0, Math.round((r.endedAt.getTime() - r.startedAt.getTime()) / 1000)),
    billableSeconds: r.billableSeconds,
    timelineUrl: `/api/v1/voice/sessions/${r.id}/timeline`,
  }));
}
