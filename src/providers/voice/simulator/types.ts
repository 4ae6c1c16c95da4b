import type { SimulatedTurnTaking, SimulatorFaults } from './faults.js';

/** A transcript fragment as the simulator emitted it (for tests comparing what the adapter delivered). */
export interface SimulatedTranscript {
  text: string;
  startMs: number;
  endMs: number;
}

/** What the simulator knows about one session; kept after the session ends so tests can compare. */
export interface SimulatedSessionRecord {
  id: string;
  faults: SimulatorFaults;
  /** Live cumulative usage; after `ended`, the final figure it reported (or would have reported). */
  usageSeconds: number;
  ended: boolean;
  endReason: 'close_requested' | 'connection_lost' | 'remote_hangup' | undefined;
  /** True when session.closed went out on the wire. */
  closedSent: boolean;
  muted: boolean;
  audioFramesIn: number;
  audioFramesOut: number;
  resumes: number;
  inputTranscripts: SimulatedTranscript[];
  outputTranscripts: SimulatedTranscript[];
  delegations: string[];
  /** Function calls its backend made (`tool=` tags) and the items given back (`response.item.create`). */
  functionCalls: Array<{ callId: string; name: string; arguments: string }>;
  backendItems: unknown[];
  /** Client event types received, in order, excluding audio appends. */
  clientEvents: string[];
  /** The turn taking its instructions asked for (the end-of-speech silence is honoured). */
  turnTaking: SimulatedTurnTaking;
  /** Raw text frames both ways when the simulator runs with recordWire (type-level contract test). */
  wireIn: string[];
  wireOut: string[];
}

/** Live counters for the whole simulator (read them any time; they are updated in place). */
export interface VoiceSimulatorStats {
  connections: number;
  refusedHandshakes: number;
  sessionsStarted: number;
  sessionsActive: number;
  resumes: number;
  audioFramesIn: number;
  audioFramesOut: number;
  /** WebSocket pings from clients (keepalive probes). */
  pingsReceived: number;
  sessions: Map<string, SimulatedSessionRecord>;
}

/** Timing knobs shared by every session of one simulator. */
export interface SimTiming {
  usageIntervalMs: number;
  /** Voiced input audio per input transcript word. */
  transcriptChunkMs: number;
  /** Output audio per spoken word. */
  wordMs: number;
  /** Pace of output frames; 0 sends a whole reply at once. */
  outputFrameIntervalMs: number;
  resumeWindowMs: number;
  replayCount: number;
  recordWire: boolean;
  now: () => number;
}

/** A new session's record: nothing heard, said or billed yet; `clientEvent` is how it was opened. */
export function newSessionRecord(
  id: string,
  faults: SimulatorFaults,
  clientEvent: string,
  wireIn: string[] = [],
): SimulatedSessionRecord {
  return {
    id,
    faults,
    usageSeconds: 0,
    ended: false,
    endReason: undefined,
    closedSent: false,
    muted: false,
    audioFramesIn: 0,
    audioFramesOut: 0,
    resumes: 0,
    inputTranscripts: [],
    outputTranscripts: [],
    delegations: [],
    functionCalls: [],
    backendItems: [],
    clientEvents: [clientEvent],
    turnTaking: {},
    wireIn,
    wireOut: [],
  };
}

/** A word the session is saying: its text and the 20 ms frames of it still to send. */
export interface Word {
  text: string;
  framesLeft: number;
}
