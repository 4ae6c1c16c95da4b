import type { Sql } from '../../db/index.js';
import type { OmittedEvents, TimelineEvent, TimelineSnapshot, TimelineTurn } from './types.js';

/** One timeline to store (the writer's batch). */
export interface TimelineWrite {
  sessionId: string;
  accountId: string;
  assistantId: string;
  final: boolean;
  snapshot: TimelineSnapshot;
}

/**
 * Store a batch of timelines in one statement (insert or replace; a final one is never replaced by an older, not
 * final write that lands after it).
 */
export async function upsertTimelines(sql: Sql, batch: readonly TimelineWrite[]): Promise<void> {
  if (batch.length === 0) return;
  const rows = batch.map((w) => ({
    session_id: w.sessionId,
    account_id: w.accountId,
    assistant_id: w.assistantId,
    transport: w.snapshot.transport,
    minted_at: new Date(w.snapshot.mintedAt).toISOString(),
    events: JSON.stringify(w.snapshot.events),
    events_omitted: w.snapshot.eventsOmitted === null ? null : JSON.stringify(w.snapshot.eventsOmitted),
    turns: JSON.stringify(w.snapshot.turns),
    turns_omitted: w.snapshot.turnsOmitted,
    final: w.final,
  }));
  await sql`
    insert into voice_timelines (session_id, account_id, assistant_id, transport, minted_at, events, events_omitted,
                                 turns, turns_omitted, final)
    select r.session_id, r.account_id, r.assistant_id, r.transport, r.minted_at::timestamptz, r.events::jsonb,
           r.events_omitted::jsonb, r.turns::jsonb, r.turns_omitted, r.final
    from json_to_recordset((${JSON.stringify(rows)}::text)::json) as r(session_id text, account_id text, assistant_id text,
         transport text, minted_at text, events text, events_omitted text, turns text, turns_omitted int, final boolean)
    on conflict (session_id) do update set
      events = excluded.events, events_omitted = excluded.events_omitted, turns = excluded.turns,
      turns_omitted = excluded.turns_omitted, transport = excluded.transport, final = excluded.final, updated_at = now()
    where not voice_timelines.final`;
}

/** A voice call as its timeline presents it (the session row, its cost and the stored timeline, if any). */
export interface TimelineRow {
  sessionId: string;
  accountId: string;
  conversationId: string | null;
  assistantId: string;
  source: string;
  state: 'active' | 'ended' | 'lost' | 'failed';
  endReason: string | null;
  endedBy: 'client' | 'service' | 'reaper' | null;
  billableSeconds: number;
  createdAt: Date;
  endedAt: Date | null;
  costMicros: number;
  transport: string | null;
  mintedAt: Date | null;
  events: TimelineEvent[] | null;
  eventsOmitted: OmittedEvents | null;
  turns: TimelineTurn[] | null;
  turnsOmitted: number | null;
}

/** The call of this account (undefined: none, or another account's). */
export async function findTimeline(sql: Sql, accountId: string, sessionId: string): Promise<TimelineRow | undefined> {
  const rows = await sql<TimelineRow[]>`
    select v.id as session_id, v.account_id, v.conversation_id, v.assistant_id, v.source, v.state, v.end_reason,
           v.ended_by, v.billable_seconds, v.created_at, v.ended_at,
           coalesce((select sum(e.cost_micros)::int8 from usage_reservations r join usage_events e on e.reservation_id = r.id
                     where r.voice_session_id = v.id and r.account_id = v.account_id and r.kind = 'voice'), 0)::int8 as cost_micros,
           t.transport, t.minted_at, t.events, t.events_omitted, t.turns, t.turns_omitted
    from voice_sessions v left join voice_timelines t on t.session_id = v.id
    where v.id = ${sessionId} and v.account_id = ${accountId}`;
  const row = rows[0];
  if (row !== undefined) row.costMicros = Number(row.costMicros);
  return row;
}

/** Daily turn latency and time to first audio of an assistant's calls (percentiles over the stored turns). */
export interface LatencyDay {
  /** YYYY-MM-DD (UTC). */
  day: string;
  turns: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  firstAudioP50Ms: number;
  firstAudioP95Ms: number;
}

export async function dailyLatency(
  sql: Sql,
  accountId: string,
  assistantId: string,
  since: Date,
): Promise<LatencyDay[]> {
  const rows = await sql<LatencyDay[]>`
    select to_char(t.minted_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as turns,
           percentile_cont(0.5) within group (order by (turn->>'latencyMs')::float8) as latency_p50_ms,
           percentile_cont(0.95) within group (order by (turn->>'latencyMs')::float8) as latency_p95_ms,
           percentile_cont(0.5) within group (order by (turn->'parts'->1->>'ms')::float8) as first_audio_p50_ms,
           percentile_cont(0.95) within group (order by (turn->'parts'->1->>'ms')::float8) as first_audio_p95_ms
    from voice_timelines t cross join lateral jsonb_array_elements(t.turns) as turn
    where t.account_id = ${accountId} and t.assistant_id = ${assistantId} and t.minted_at >= ${since}
    group by 1 order by 1`;
  return rows;
}
