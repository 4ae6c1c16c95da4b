import type { VoiceSessionHandlers } from '../../providers/voice/index.js';
import type { RelayStats } from '../pump/options.js';
import type { LiveVoiceSession } from './live-session.js';

/**
 * The seam between the session core and the ways a caller reaches a call (src/voice/transports/<name>/). The core
 * admits, supervises, bills and settles calls without naming a transport; a transport owns its socket route, its
 * wire codec, what the mint answers under `stream` (below) and its presence signal: it tells the session when its
 * caller connected and went (`LiveVoiceSession.onMediaAttached` / `onMediaDetached`, through the pump's
 * `RelayLink.attached` / `detached`), which is what billing and the join timeout go by.
 */
export interface CallerTransport {
  /** `websocket`, `twilio` (a carrier's media stream). */
  readonly name: string;
  /** What the call's timeline says carried it (`phone` for a carrier's stream); the name when absent. */
  readonly timelineName?: string;
  /** What the mint answers under `stream`: where and how this transport's caller connects. */
  stream(base: URL, sessionId: string, controlToken: string): MintStream;
  /** This transport's live connections and the counters of closed ones (tests and metrics read them). */
  readonly connections: CallerConnections;
}

/**
 * A transport whose audio runs between the caller and the provider, never through Parley (WebRTC: the mint hands the
 * caller's SDP offer to the provider and returns its answer). It cannot see the caller's connection, so it learns
 * presence from what the provider's sideband reflects, through the provider handlers it adds to the session's.
 */
export interface DirectMediaTransport {
  /** `webrtc`. */
  readonly name: string;
  /**
   * Provider handlers for one session (merged into the session's own): presence and any tap on reflected audio.
   * `present`: the caller is known to be connected already (a call taken over from a dead owner).
   */
  watch(
    session: LiveVoiceSession,
    options?: { present?: boolean },
  ): Pick<VoiceSessionHandlers, 'onInputAudio' | 'onOutputAudio'>;
}

export interface MintStream {
  url: string;
  /** `parley.voice.v1` (docs/voice-protocol.md), or `twilio.media-stream` (a carrier's Media Streams WebSocket). */
  protocol: 'parley.voice.v1' | 'twilio.media-stream';
}

/** One caller connection as figures see it. */
export interface CallerConnection {
  readonly stats: Readonly<RelayStats>;
  /** Assistant audio waiting for a slow caller (bytes). */
  readonly pendingBytes: number;
}

export interface CallerConnections {
  /** The current connection of each session with a caller connected. */
  readonly relays: ReadonlyMap<string, CallerConnection>;
  /** Counters of connections that have closed, summed (live ones: read `relays`). */
  readonly closedTotals: Readonly<RelayStats>;
}

/** Several transports' connections as one (tests and figures read every caller, whatever way it came). */
export function joinedConnections(all: readonly CallerConnections[]): CallerConnections {
  if (all.length === 1) return all[0]!;
  return {
    get relays() {
      const joined = new Map<string, CallerConnection>();
      for (const c of all) for (const [id, relay] of c.relays) joined.set(id, relay);
      return joined;
    },
    get closedTotals() {
      const sum = { ...all[0]!.closedTotals };
      for (const c of all.slice(1)) {
        for (const key of Object.keys(sum) as (keyof RelayStats)[]) {
          sum[key] =
            key === 'maxSocketBuffered' || key === 'maxPending'
              ? Math.max(sum[key], c.closedTotals[key])
              : sum[key] + c.closedTotals[key];
        }
      }
      return sum;
    },
  };
}

/** Relay totals of a transport: the closed connections' counters plus the live ones'. */
export function relayTotalsOf(connections: CallerConnections): {
  callerFrames: number;
  callerBytes: number;
  assistantChunks: number;
  assistantSentBytes: number;
  assistantDroppedBytes: number;
} {
  const c = connections.closedTotals;
  const totals = {
    callerFrames: c.callerFrames,
    callerBytes: c.callerBytes,
    assistantChunks: c.assistantChunks,
    assistantSentBytes: c.assistantSentBytes,
    assistantDroppedBytes: c.assistantDroppedBytes,
  };
  for (const relay of connections.relays.values()) {
    totals.callerFrames += relay.stats.callerFrames;
    totals.callerBytes += relay.stats.callerBytes;
    totals.assistantChunks += relay.stats.assistantChunks;
    totals.assistantSentBytes += relay.stats.assistantSentBytes;
    totals.assistantDroppedBytes += relay.stats.assistantDroppedBytes;
  }
  return totals;
}
