/** What the runner and the load workers exchange (plain structured-clone data). */
import type { ParleyTarget } from './parley-client.js';

/**
 * How a caller talks to the implementation under test:
 * - `pcm`: binary 960-byte PCM frames both ways; waits for a {"type":"ready"} text frame (baselines).
 * - `gpt-live`: the GPT-Live primary protocol straight to the simulator (the latency floor).
 * - `parley`: mint + media socket + heartbeats + gate stream (Parley's documented voice API).
 */
export type CallerProtocol = 'pcm' | 'gpt-live' | 'parley';

export interface WorkerConfig {
  workerId: number;
  protocol: CallerProtocol;
  /** ws:// URL for pcm and gpt-live. */
  url?: string;
  parley?: ParleyTarget;
  /** Global index of this worker's first caller and the total count (to stagger send phases evenly). */
  firstCaller: number;
  callers: number;
  totalCallers: number;
  frameMs: number;
  connectConcurrency: number;
}

export interface GoMessage {
  type: 'go';
  /** Epoch ms (performance.timeOrigin + performance.now()) of the first frame. */
  startEpoch: number;
  warmupMs: number;
  measureMs: number;
  drainMs: number;
}

export interface ReadyMessage {
  type: 'ready';
  connected: number;
  failed: number;
  firstError?: string;
  notBuilt?: boolean;
}

export interface WorkerResult {
  type: 'done';
  /** Frames sent inside the measurement window, and how many of those came back before the drain ended. */
  measuredSent: number;
  measuredReceived: number;
  /** Round trips (ms) of measured frames, unsorted. */
  rtts: Float64Array;
  /** Frames sent in the whole run (warm-up included) and received. */
  totalSent: number;
  totalReceived: number;
  /** How late the generator sent frames (ms behind schedule): a generator that falls behind invalidates the run. */
  maxLagMs: number;
  lateFrames: number;
  socketsClosedEarly: number;
  heartbeats: number;
  heartbeatFailures: number;
  gateLines: number;
}

export const FRAME_BYTES = 960;
export const RING = 1024;
