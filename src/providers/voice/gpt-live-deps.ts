import type { Logger } from '../../log/index.js';
import type { AppendFlusher } from './append-coalescer.js';
import type { VoiceClock } from './clock.js';
import type { RelayResidence } from './residence.js';
import type { VoiceSessionStats } from './types.js';
import type { KeepaliveProbe, SharedTicker } from './shared-ticker.js';

/** Everything a GPT-Live session needs, resolved by the provider (defaults applied). */
export interface GptLiveSessionDeps {
  url: string;
  headers: Record<string, string>;
  defaultModel: string;
  lockTimeoutMs: number;
  closeTimeoutMs: number;
  reconnectWindowMs: number;
  reconnectInitialDelayMs: number;
  reconnectMaxDelayMs: number;
  highWaterBytes: number;
  maxQueuedBytes: number;
  /** The adapter instance's shared keepalive ticker; undefined = no keepalive (keepaliveMs 0). */
  keepalive: SharedTicker<KeepaliveProbe> | undefined;
  /** Coalesced appends (appendMs > 0): the adapter instance's shared flusher; undefined = one append per frame. */
  appendFlusher: AppendFlusher | undefined;
  /** The instance's residence figures (every session records into them). */
  residence: RelayResidence;
  clock: VoiceClock;
  logger: Logger | undefined;
}

/** A new session's counters, all zero. */
export function emptySessionStats(): VoiceSessionStats {
  return {
    audioFramesSent: 0,
    audioFramesRefused: 0,
    audioFramesDropped: 0,
    audioChunksReceived: 0,
    duplicateEvents: 0,
    garbageFrames: 0,
    reconnects: 0,
  };
}
