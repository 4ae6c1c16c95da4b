/**
 * What the voice control plane reports as it works (metrics). Optional: without one nothing is counted. Media
 * counters are not here: the relay keeps its own and they are read at scrape time (no work per frame).
 */
export interface VoiceObserver {
  /** ok; refused (4xx) or failed (5xx), with the error code. */
  mint(outcome: 'ok' | 'refused' | 'failed', reason: string): void;
  /** An owned session ended (reason `client` when the caller hung up), with its provider link's reconnects. */
  sessionEnded(reason: string, providerReconnects: number): void;
  /** A heartbeat answer: its status, or the error code. */
  heartbeat(status: string): void;
  gate(state: string, reason: string): void;
  /** A turn ended (the call's timeline): its latency and the provider's time to first audio, in ms. */
  turn?(latencyMs: number, firstAudioMs: number): void;
}
