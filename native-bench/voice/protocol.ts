/** What the runner and the load workers exchange (plain structured-clone data). */
import type { ParleyTarget } from './parley-client.js';

/**
 * How a caller talks to the implementation under test:
 * - `pcm`: binary 960-byte PCM frames both ways; waits for a {"type":"ready"} text frame (baselines).
 * - `gpt-live`: the GPT-Live primary protocol straight to the simulator (the latency floor).
 * - `parley`: mint + media socket + heartbeats + gate stream (Parley's documented voice API).
 */
export type CallerProtocol = 'pcm' | 'gpt-live' | 'parley';

/**
 * The traffic shape (both use 20 ms caller frames):
 * - `echo`: the simulator returns every input frame at once as one output delta (one frame in, one frame out).
 * - `realistic`: the simulator speaks like a provider: the input audio comes back in 100 ms deltas at real-time
 *   pace, cut independently of the input framing, with an output transcript every ~300 ms (simulator `echo=paced`).
 */
export type TrafficShape = 'echo' | 'realistic';

export interface WorkerConfig {
  workerId: number;
  protocol: CallerProtocol;
  shape: TrafficShape;
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
/**
 * Every caller frame carries its sequence number (int32 LE, bytes 0-3) followed by this marker (bytes 4-7), so a
 * receiver finds every frame start in any output chunk, however the provider cut the audio. As PCM16 the marker
 * reads 0x6150, 0x6c52 (24,912 and 27,730): louder than the bench's tone (peak 6,000), so audio never forges it.
 */
export const FRAME_MARKER = Buffer.from('PaRl', 'latin1');
export const RING = 1024;
