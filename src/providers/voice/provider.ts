import type { Logger } from '../../log/index.js';
import { systemClock } from './clock.js';
import type { VoiceClock } from './clock.js';
import type { GptLiveSessionDeps } from './gpt-live-deps.js';
import { GptLiveSession } from './gpt-live-session.js';
import { AppendFlusher } from './append-coalescer.js';
import { RelayResidence } from './residence.js';
import { keepaliveTicker } from './shared-ticker.js';
import { SIDEBAND_PING_MS, SIDEBAND_REATTACH_DELAYS_MS, SIDEBAND_REATTACH_WINDOW_MS } from './sideband-session.js';
import { resumeWebRtcSession, startWebRtcSession } from './webrtc-start.js';
import type {
  StartSessionOptions,
  VoiceAdapterTuning,
  VoiceProvider,
  VoiceSession,
  VoiceSessionConfig,
} from './types.js';

/** Options for the gpt-live provider: the real service. */
export interface GptLiveProviderOptions extends VoiceAdapterTuning {
  kind: 'gpt-live';
  /** Primary WebSocket URL, e.g. wss://api.openai.com/v1/live/sessions (config VOICE_PROVIDER_URL). */
  url: string;
  /** Sent as `Authorization: Bearer <key>`; never logged (config VOICE_PROVIDER_API_KEY). */
  apiKey: string;
  /** Default model when a session config names none (config VOICE_MODEL). */
  model: string;
  logger?: Logger;
}

/** Options for a running simulator (see startVoiceSimulator). Same adapter, different URL. */
export interface SimulatorProviderOptions extends VoiceAdapterTuning {
  kind: 'simulator';
  /** The simulator's ws:// URL as printed by `npm run simulator` or returned by startVoiceSimulator. */
  url: string;
  /** Only needed when the simulator was started with an apiKey to check. */
  apiKey?: string;
  model?: string;
  /**
   * Fault hooks for every session of this provider, sent as the `x-simulator-faults` header (e.g.
   * `drop-after=200,refuse-reconnect`). Per-session hooks go in the instructions as `[sim:...]`.
   */
  simulatorFaults?: string;
  logger?: Logger;
}

export type VoiceProviderOptions = GptLiveProviderOptions | SimulatorProviderOptions;

/** Production defaults (3 s for the lock). */
export const VOICE_ADAPTER_DEFAULTS = Object.freeze({
  lockTimeoutMs: 3000,
  closeTimeoutMs: 5000,
  reconnectWindowMs: 15_000,
  reconnectInitialDelayMs: 250,
  reconnectMaxDelayMs: 4000,
  // ~1.5 s of base64 audio in the socket before frames wait in the adapter's queue.
  highWaterBytes: 96 * 1024,
  // ~3 s of waiting audio before the oldest frames are dropped.
  maxQueuedBytes: 192 * 1024,
  // A ping every 2 s; a link that answers nothing (no pong, no event) for a whole interval is half-open and is
  // dropped and resumed: detected within 2–4 s instead of ~30 s.
  keepaliveMs: 2000,
  // A caller frame goes at once when the link has nothing in flight; while its previous write has not drained, frames
  // are gathered into one append for at most this long (Parley's config: VOICE_PROVIDER_APPEND_MS). 0: never held.
  appendMs: 10,
});

/**
 * Create the voice provider the config selects. `gpt-live` and `simulator` run the same GPT-Live adapter; only the
 * URL, credentials and optional fault header differ. Options are validated once and frozen.
 */
export function createVoiceProvider(options: VoiceProviderOptions): VoiceProvider {
  const url = new URL(options.url);
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new TypeError('Voice provider URL must be ws:// or wss://.');
  if (options.kind === 'gpt-live' && options.apiKey.length === 0) throw new TypeError('gpt-live needs an API key.');
  const headers: Record<string, string> = {};
  if (options.apiKey !== undefined && options.apiKey.length > 0) headers.Authorization = `Bearer ${options.apiKey}`;
  if (options.kind === 'simulator' && options.simulatorFaults !== undefined)
    headers['x-simulator-faults'] = options.simulatorFaults;
  const appendMs = options.appendMs ?? VOICE_ADAPTER_DEFAULTS.appendMs;
  if (!Number.isFinite(appendMs) || appendMs < 0 || appendMs > 1000) throw new RangeError('appendMs must be 0..1000.');
  const clock = options.clock ?? systemClock;
  const keepaliveMs = options.keepaliveMs ?? VOICE_ADAPTER_DEFAULTS.keepaliveMs;
  if (!Number.isFinite(keepaliveMs) || keepaliveMs < 0) throw new RangeError('keepaliveMs must be 0 or more.');
  const residence = new RelayResidence();
  const deps: GptLiveSessionDeps = Object.freeze({
    url: url.toString(),
    headers: Object.freeze(headers),
    defaultModel: options.model ?? 'gpt-live-1',
    lockTimeoutMs: options.lockTimeoutMs ?? VOICE_ADAPTER_DEFAULTS.lockTimeoutMs,
    closeTimeoutMs: options.closeTimeoutMs ?? VOICE_ADAPTER_DEFAULTS.closeTimeoutMs,
    reconnectWindowMs: options.reconnectWindowMs ?? VOICE_ADAPTER_DEFAULTS.reconnectWindowMs,
    reconnectInitialDelayMs: options.reconnectInitialDelayMs ?? VOICE_ADAPTER_DEFAULTS.reconnectInitialDelayMs,
    reconnectMaxDelayMs: options.reconnectMaxDelayMs ?? VOICE_ADAPTER_DEFAULTS.reconnectMaxDelayMs,
    highWaterBytes: options.highWaterBytes ?? VOICE_ADAPTER_DEFAULTS.highWaterBytes,
    maxQueuedBytes: options.maxQueuedBytes ?? VOICE_ADAPTER_DEFAULTS.maxQueuedBytes,
    keepalive: keepaliveMs > 0 ? keepaliveTicker(clock, keepaliveMs) : undefined,
    appendFlusher: appendMs > 0 ? new AppendFlusher(clock, appendMs, residence) : undefined,
    residence,
    clock,
    logger: options.logger,
  });
  // WebRTC: the same base over HTTP for create and hangup, and its sideband WebSockets (pinged every 5 s).
  const http = new URL(url);
  http.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  const sideband = Object.freeze({
    httpBase: http.toString().replace(/\/$/, ''),
    wsBase: url.toString().replace(/\/$/, ''),
    headers: deps.headers,
    defaultModel: deps.defaultModel,
    lockTimeoutMs: deps.lockTimeoutMs,
    closeTimeoutMs: deps.closeTimeoutMs,
    reattachDelaysMs: options.sidebandReattachDelaysMs ?? SIDEBAND_REATTACH_DELAYS_MS,
    reattachWindowMs: options.sidebandReattachWindowMs ?? SIDEBAND_REATTACH_WINDOW_MS,
    keepalive: keepaliveMs > 0 ? keepaliveTicker(clock, options.sidebandPingMs ?? SIDEBAND_PING_MS) : undefined,
    clock,
  });
  return Object.freeze({
    kind: options.kind,
    residence: deps.residence,
    startWebRtcSession: (config: VoiceSessionConfig, offerSdp: string, start: StartSessionOptions = {}) =>
      startWebRtcSession(sideband, config, offerSdp, { ...start, logger: start.logger ?? deps.logger }),
    resumeWebRtcSession: (providerSessionId: string, start: StartSessionOptions = {}) =>
      resumeWebRtcSession(sideband, providerSessionId, { ...start, logger: start.logger ?? deps.logger }),
    startSession(config: VoiceSessionConfig, start: StartSessionOptions = {}): Promise<VoiceSession> {
      const session = new GptLiveSession(deps, config, start.handlers, start.logger ?? deps.logger);
      return start.signal === undefined ? session.start() : session.start(start.signal);
    },
  });
}
