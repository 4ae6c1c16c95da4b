/**
 * A voice call's timeline (GET /api/v1/voice/sessions/{sessionId}/timeline): its events since the mint, its turns
 * with the latency split into owned parts, and why it ended. Also an assistant's turn latency by day.
 */
import type { ParleyClient } from './client.js';
import type { CallOptions, Operation, SuccessBody } from './types.js';

export type VoiceTimeline = SuccessBody<Operation<'/api/v1/voice/sessions/{sessionId}/timeline', 'get'>>;
export type VoiceTimelineTurn = VoiceTimeline['turns'][number];
export type VoiceTimelineEvent = VoiceTimeline['events'][number];
export type VoiceLatency = SuccessBody<Operation<'/api/v1/assistants/{assistantId}/voice/latency', 'get'>>;

/** The timeline of a call of your account (live or ended); a ParleyError 404 for any other id. */
export function getVoiceTimeline(
  client: ParleyClient,
  sessionId: string,
  options: CallOptions = {},
): Promise<VoiceTimeline> {
  return client.GET('/api/v1/voice/sessions/{sessionId}/timeline', { params: { path: { sessionId } }, ...options });
}

/** An assistant's turn latency and time to first audio per day (p50 and p95) over the last `days` (default 7). */
export function getVoiceLatency(
  client: ParleyClient,
  assistantId: string,
  days = 7,
  options: CallOptions = {},
): Promise<VoiceLatency> {
  return client.GET('/api/v1/assistants/{assistantId}/voice/latency', {
    params: { path: { assistantId }, query: { days } },
    ...options,
  });
}

/** Where a turn's waiting time went, summed by owner (caller, relay, provider, platform), in ms. */
export function latencyByOwner(turn: VoiceTimelineTurn): Record<VoiceTimelineTurn['parts'][number]['owner'], number> {
  const byOwner = { caller: 0, relay: 0, provider: 0, platform: 0, owner: 0 };
  for (const part of turn.parts) byOwner[part.owner] += part.ms;
  return byOwner;
}
