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
  /** `websocket`, later e.g. `phone-media-stream`. */
  readonly name: string;
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
  /** Provider handlers for one session (merged into the session's own): presence and any tap on reflected audio. */
  watch(session: LiveVoiceSession): Pick<VoiceSessionHandlers, 'onInputAudio' | 'onOutputAudio'>;
}

export interface MintStream {
  url: string;
  protocol: 'parley.voice.v1';
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
