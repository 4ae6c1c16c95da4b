import type { ServerFigures } from './server-figures.js';
import type { ServerFigures as ServerTimelineFigures } from './server-side.js';
import type { LatencySummary } from './stats.js';

/** What a load test measured: the JSON report (`--json`), the summary and the HTML report are made from it. */
export interface LoadTestReport {
  tool: 'parley-loadtest';
  version: 1;
  target: { url: string; assistantId: string; auth: 'api-key' | 'keyless'; temporaryAssistant: boolean };
  plan: { calls: number; chats: number; rampUpMs: number; durationMs: number; callMs: number | null; input: string };
  startedAt: string;
  endedAt: string;
  elapsedMs: number;
  /** Stopped early by Ctrl-C (or the caller's signal). */
  interrupted: boolean;
  voice: {
    attempted: number;
    connected: number;
    /** Calls that were connected and ended (by this tool or the service). */
    ended: number;
    peakConcurrent: number;
    /** Mint round trip (POST /api/v1/voice/sessions), ms. */
    mintMs: LatencySummary | null;
    /** From dialing (mint start) to the media socket open, ms. */
    connectMs: LatencySummary | null;
    /** From dialing to the first assistant audio heard, ms. */
    firstAudioMs: LatencySummary | null;
    /** Caller frame out -> the same frame back (the echo simulator), ms; null when no echo came back. */
    roundTripMs: LatencySummary | null;
    echoDetected: boolean;
    /** Refused mints by "status reason-or-code", e.g. "429 voice_concurrency_limit". */
    refusals: Record<string, number>;
    /** Why calls ended: client (this tool hung up) or the service's endReason. */
    endReasons: Record<string, number>;
    /**
     * Connected calls per instance, by the route key their session ids carry (`vs_<key>_...`): how a proxy spread
     * them over a cluster. One entry for a single instance.
     */
    perInstance: Record<string, number>;
    errors: Record<string, number>;
    audio: {
      sentBytes: number;
      receivedBytes: number;
      /** Caller audio this tool dropped because a socket's send buffer was full. */
      droppedLocallyBytes: number;
      /** Assistant audio the service dropped for a slow reader (audio_dropped notices). */
      droppedByServerMs: number;
      /** Assistant audio that arrived while the gate was closed (should be 0). */
      receivedWhileGateClosedBytes: number;
      /** Largest lateness of the 20 ms send schedule: above ~100 ms this machine, not Parley, is the bottleneck. */
      maxSendLagMs: number;
    };
    heartbeats: { sent: number; failed: number };
    /** What the service measured of the same calls (their timelines; API-key runs only), beside what was heard here. */
    server: ServerTimelineFigures | null;
  };
  chat: {
    attempted: number;
    answered: number;
    latencyMs: LatencySummary | null;
    firstTokenMs: LatencySummary | null;
    refusals: Record<string, number>;
    errors: Record<string, number>;
  } | null;
  /** The server's own figures from its /metrics (with --metrics-token), beside what the callers measured. */
  server?: ServerFigures;
  /** One point per second. */
  timeline: Array<{ t: number; activeCalls: number; refusals: number; errors: number; roundTripP50: number | null }>;
}

export interface Progress {
  elapsedMs: number;
  totalMs: number;
  activeCalls: number;
  connected: number;
  refusals: number;
  errors: number;
  roundTripP50: number | undefined;
  chatsAnswered: number;
}
