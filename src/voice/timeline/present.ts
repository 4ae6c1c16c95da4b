import type { z } from 'zod';
import type { TimelineRow } from './queries.js';
import type { timelineSchema } from './schemas.js';
import type { TimelineEvent, TimelineSnapshot, TimelineTurn } from './types.js';

export type TimelineAnswer = z.output<typeof timelineSchema>;
export type Fault = 'caller' | 'assistant' | 'provider' | 'platform' | 'budget' | null;

/**
 * Whose doing an end was. The caller's: it hung up (null, a normal end), went quiet (idle), stopped its heartbeat,
 * disconnected, or opened a newer call (superseded). A limit's (budget): the account's usage or the call's maximum
 * duration. The provider's: its link was lost or it closed the call (control_lost after a provider event), or it
 * was unavailable. Parley's (platform): it shut down, or lost control of the call itself (its instance died: lost).
 */
export function faultOf(
  reason: string | null,
  endedBy: TimelineRow['endedBy'],
  state: TimelineRow['state'],
  events: readonly TimelineEvent[],
): Fault {
  if (state === 'lost' || endedBy === 'reaper') return 'platform';
  switch (reason) {
    case null:
    case 'assistant_ended':
    case 'transferred':
      return null;
    case 'idle':
    case 'heartbeat_lost':
    case 'disconnected':
    case 'superseded':
      return 'caller';
    case 'usage_limit':
    case 'max_duration':
      return 'budget';
    case 'voice_unavailable':
      return 'provider';
    case 'control_lost':
      return events.some((e) => e.type === 'provider_lost' || e.type === 'provider_closed') ? 'provider' : 'platform';
    default:
      return 'platform';
  }
}

/** The timeline route's answer: the call's row (end, cost) with its timeline (live from memory, else stored). */
export function presentTimeline(row: TimelineRow, live: TimelineSnapshot | undefined): TimelineAnswer {
  const mintedAt = live?.mintedAt ?? row.mintedAt?.getTime() ?? row.createdAt.getTime();
  const events = live?.events ?? row.events ?? [];
  const turns = live?.turns ?? row.turns ?? [];
  const state = row.state === 'failed' ? 'ended' : row.state;
  return {
    sessionId: row.sessionId,
    conversationId: row.conversationId,
    assistantId: row.assistantId,
    source: row.source,
    transport: live?.transport ?? row.transport ?? 'websocket',
    state,
    startedAt: new Date(mintedAt).toISOString(),
    endedAt: row.endedAt?.toISOString() ?? null,
    events,
    eventsOmitted: live !== undefined ? live.eventsOmitted : row.eventsOmitted,
    turns,
    turnsOmitted: live?.turnsOmitted ?? row.turnsOmitted ?? 0,
    summary: summaryOf(turns),
    end:
      state === 'active'
        ? null
        : {
            reason: row.endReason,
            endedBy: row.endedBy,
            fault: faultOf(row.endReason, row.endedBy, row.state, events),
            billableSeconds: row.billableSeconds,
            costMicros: row.costMicros,
          },
  };
}

function summaryOf(turns: readonly TimelineTurn[]): TimelineAnswer['summary'] {
  const sorted = turns.map((t) => t.latencyMs).sort((a, b) => a - b);
  return { turns: sorted.length, latencyP50Ms: percentile(sorted, 0.5), latencyP95Ms: percentile(sorted, 0.95) };
}

/** Nearest-rank percentile of sorted values (null when there are none). */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
