/**
 * The shapes of a call's timeline (docs/voice-protocol.md, the timeline): what happened in a call and when, in
 * milliseconds since the mint, and where each turn's waiting time went.
 */

/** Who a part of a turn's latency belongs to. */
export type TimelineOwner = 'caller' | 'relay' | 'provider' | 'platform' | 'owner';

/** Event details are small flat values (codes, counts, reasons): never transcripts, audio or secrets. */
export type TimelineDetail = Record<string, string | number | boolean | null>;

export interface TimelineEvent {
  /** Milliseconds since the mint (whole ms); events are ordered and never go back in time. */
  atMs: number;
  type: string;
  detail?: TimelineDetail;
}

/** The middle of a long call's events, kept as counts (the first and the last events are kept as they were). */
export interface OmittedEvents {
  count: number;
  fromMs: number;
  toMs: number;
  byType: Record<string, number>;
}

export interface TurnPart {
  name: string;
  ms: number;
  owner: TimelineOwner;
}

/** One turn: from the caller's end of speech to the first answer audio Parley wrote to the caller. */
export interface TimelineTurn {
  index: number;
  userStoppedAtMs: number;
  firstAudioAtMs: number;
  latencyMs: number;
  /** Add up to latencyMs (each rounded to 0.1 ms). */
  parts: TurnPart[];
}

/** What is kept of one call (in memory while it runs, then in the database). */
export interface TimelineSnapshot {
  transport: string;
  /** Wall time of the mint (epoch ms): atMs counts from here. */
  mintedAt: number;
  events: TimelineEvent[];
  eventsOmitted: OmittedEvents | null;
  turns: TimelineTurn[];
  /** Turns of a long call's middle left out (their figures still reached /metrics). */
  turnsOmitted: number;
}

/** Event types the session core and the WebSocket transport record (other transports add their own). */
export const CORE_EVENT_TYPES = [
  'minted',
  'caller_connected',
  'caller_disconnected',
  'provider_connected',
  'provider_reconnecting',
  'provider_reconnected',
  'provider_lost',
  'provider_closed',
  'gate_opened',
  'gate_closed',
  'degraded',
  'recovered',
  'turn_started',
  'first_audio',
  'ended',
  'settled',
] as const;
