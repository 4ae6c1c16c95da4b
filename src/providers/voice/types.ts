import type { RelayResidence } from './residence.js';
import type { Logger } from '../../log/index.js';
import type { VoiceProviderError } from './errors.js';
import type { VoiceClock } from './clock.js';
import type { VoiceAudioFormat } from './audio-format.js';

/**
 * The provider seam the voice capability talks to (docs/house-rules.md, interfaces only at seams: gpt-live and the simulator are the two
 * implementations, proven by one contract suite). Nothing here mentions sockets or the wire protocol, so the relay
 * and the session service can be tested with any implementation.
 */

/** Who handles work the model delegates. Only client (Parley-owned) delegation is relayed today. */
export interface VoiceDelegationConfig {
  type: 'client';
  /** Delay before the model acknowledges a delegation aloud; provider default when omitted. */
  acknowledgementDelayMs?: number;
}

/** What a caller chooses per session. The data-channel lock is not optional, so it is not a field here. */
export interface VoiceSessionConfig {
  /** Provider model; the provider's configured default when omitted. */
  model?: string;
  instructions?: string;
  voice?: string;
  delegation?: VoiceDelegationConfig | null;
  /** The call's audio, both ways; PCM16 24 kHz when omitted. Passed through unchanged (nothing resampled). */
  audio?: VoiceAudioFormat;
  /**
   * Text the caller is likely to talk about (the assistant's documents). A recognizer that can be biased towards
   * it (the local provider) uses it; hosted providers ignore it and it never goes on the wire.
   */
  speechHints?: string;
  /** Speaking rate, 1 = normal (the local synthesizer; hosted providers ignore it). */
  speed?: number;
  /**
   * How the call takes turns; each omitted: the provider's default. The local voice applies both exactly; GPT-Live
   * has no turn-detection setting, so its adapter says them in the session's frontend instructions (the protocol's
   * place for "voice, conversation, interruptions"), where the model follows them (see turnTakingInstructions).
   */
  turnTaking?: {
    /** Caller speech that cuts the assistant off and starts a turn. */
    interruptAfterMs?: number;
    /** Silence that ends the caller's turn. */
    endOfSpeechSilenceMs?: number;
  };
  /**
   * Function tools the session's backend model may call. With any, the session delegates to the provider's Responses
   * backend (`delegation: {type: 'responses'}`) with these tools; calls arrive as `onFunctionCall` and their results
   * go back with `sendToBackend`. Without, delegation is as `delegation` says.
   */
  tools?: VoiceFunctionTool[];
  /** The Responses backend's model and prompt (used only with `tools`). */
  backend?: { model: string; instructions?: string };
}

/** A function tool as the session's backend model sees it. */
export interface VoiceFunctionTool {
  name: string;
  description: string;
  /** A JSON Schema object of its arguments. */
  parameters: Record<string, unknown>;
  /**
   * The owner's phrases with slots ("status of order {orderId}"): how the local voice, which has no model, calls the
   * tool (docs/tools.md, offline). Never sent to a hosted provider.
   */
  examples?: string[];
}

/** The backend model asked for a function call (a `function_call` output item of one of its responses). */
export interface VoiceFunctionCall {
  /** The model's call id: what its output answers. Unique per call; a replayed event repeats it. */
  callId: string;
  name: string;
  /** The arguments as the model wrote them (a JSON text, not yet checked). */
  arguments: string;
  /** The backend response the call belongs to: its calls are answered before the backend is asked to go on. */
  responseId: string;
  delegationId?: string | undefined;
}

/**
 * What Parley tells the session's backend model (Live protocol: `response.item.create`, `response.create`). A message
 * that brings an async call's late result also names it (`toolResult`: the function call it answers, with the output
 * as `function_output` would carry it), for a provider with no model to read the text (the local voice states it).
 */
export type VoiceBackendCommand =
  | { type: 'function_output'; callId: string; output: string }
  | { type: 'message'; text: string; toolResult?: { callId: string; name: string; output: string } | undefined }
  | { type: 'respond' };

/**
 * Link state for supervision. `reconnecting` maps to the heartbeat's `degraded`; `lost` means the provider link is
 * gone for good (reconnect refused, window exhausted or a fatal error) and the session must end.
 */
export type VoiceLinkState = 'connecting' | 'connected' | 'reconnecting' | 'lost' | 'closed';

/** A transcript fragment on the provider's session timeline (milliseconds from session start). */
export interface VoiceTranscriptDelta {
  text: string;
  startMs: number;
  endMs: number;
}

/** The model handed work to Parley; answer with appendCommentary(text, id). */
export interface VoiceDelegationRequest {
  id: string;
  target: 'client' | 'responses' | 'decisions';
  offsetMs: number;
  responseId?: string;
}

/** Cumulative provider usage. Never summed: each value replaces the last. */
export interface VoiceUsage {
  seconds: number;
}

/** Why the provider session ended, as the provider said it or as the adapter had to conclude. */
export type VoiceCloseReason =
  | 'close_requested'
  | 'expired'
  | 'content'
  | 'remote_hangup'
  | 'connection_lost'
  /** Start failed (unconfirmed lock, refused, timeout) and the adapter closed the link itself. */
  | 'start_failed';

export interface VoiceSessionClosed {
  reason: VoiceCloseReason;
  /** Final cumulative usage: the provider's `session.closed` usage, or the last update seen. */
  usage: VoiceUsage;
  /** True only when the provider sent `session.closed`; false means `usage` is the last update, not a settlement. */
  usageFinal: boolean;
}

/**
 * Callbacks for one session. Passed to startSession so nothing that arrives right after `session.started` is missed.
 * Called synchronously from the socket's message handler: do not block; output audio Buffers belong to the callee.
 */
export interface VoiceSessionHandlers {
  onOutputAudio?(pcm: Buffer): void;
  /** Caller audio (bytes in the session's format) left the adapter for the provider's socket (the call's timeline). */
  onAudioSent?(bytes: number): void;
  /** The caller's audio as the provider received it (WebRTC sessions: reflected on the sideband, PCM16 24 kHz). */
  onInputAudio?(pcm: Buffer): void;
  onInputTranscript?(delta: VoiceTranscriptDelta): void;
  onOutputTranscript?(delta: VoiceTranscriptDelta): void;
  onDelegation?(request: VoiceDelegationRequest): void;
  /** The backend model calls a function tool (sessions started with `tools`). */
  onFunctionCall?(call: VoiceFunctionCall): void;
  /** A backend response finished: its function calls (if any) all arrived. */
  onBackendResponseDone?(responseId: string): void;
  onUsage?(usage: VoiceUsage): void;
  onStateChange?(state: VoiceLinkState): void;
  onError?(error: VoiceProviderError): void;
  onClosed?(closed: VoiceSessionClosed): void;
}

/** Counters a session keeps for metrics and tests; read, never reset. */
export interface VoiceSessionStats {
  audioFramesSent: number;
  /** Frames refused because the link was not connected (reconnecting, lost, closed). */
  audioFramesRefused: number;
  /** Queued frames discarded, oldest first, because the outgoing queue was full. */
  audioFramesDropped: number;
  audioChunksReceived: number;
  duplicateEvents: number;
  garbageFrames: number;
  reconnects: number;
}

export interface StartSessionOptions {
  handlers?: VoiceSessionHandlers;
  /** Child logger for this session; the provider's logger otherwise. */
  logger?: Logger;
  /** Aborting before the start completes closes the link and rejects with VOICE_PROVIDER_ABORTED. */
  signal?: AbortSignal;
}

/** One live provider session. Methods never throw for link problems: they report through handlers and stats. */
export interface VoiceSession {
  /** The provider's session id (use for sideband attach later). */
  readonly id: string;
  /** Always true on a session you can hold: start rejects with VOICE_PROVIDER_UNCONFIRMED otherwise. */
  readonly lockConfirmed: true;
  readonly state: VoiceLinkState;
  /** Latest cumulative usage seen. */
  readonly usage: VoiceUsage;
  readonly stats: Readonly<VoiceSessionStats>;
  /**
   * Send one chunk of caller audio in the session's format (normally 20 ms: 960 bytes of PCM16 at 24 kHz, 160 of
   * G.711). Returns false when the link is not
   * connected and the frame was discarded. When the outgoing queue is full the oldest queued frames are dropped
   * (live audio: latency beats completeness) and counted in stats.audioFramesDropped.
   */
  sendAudio(pcm: Buffer, readAt?: number): boolean;
  /**
   * The relay's residence figures of this session's provider instance (`readAt` above: when the frame was read
   * from the caller, on its clock), if it measures them.
   */
  readonly residence?: RelayResidence;
  mute(): void;
  unmute(): void;
  /** Developer instructions appended mid-call; optionally tied to a delegation. */
  appendInstructions(text: string, delegationId?: string | null): void;
  /** Speakable context (e.g. a grounded answer for a delegation) the model may say. */
  appendCommentary(text: string, delegationId?: string | null): void;
  /** Silent context; does not request speech. */
  appendThinking(text: string, delegationId?: string | null): void;
  /** Commands to the session's Responses backend (function results, messages, go on); absent: no backend. */
  sendToBackend?(command: VoiceBackendCommand): void;
  /** Ask the provider to close and wait for its final usage (bounded by closeTimeoutMs). Idempotent. */
  close(): Promise<VoiceSessionClosed>;
}

/** A WebRTC session: the provider's answer to the caller's offer, and the session Parley holds over the sideband. */
export interface VoiceWebRtcStart {
  session: VoiceSession;
  answerSdp: string;
}

/** How a caller's audio reaches a provider: through Parley's media WebSocket, or WebRTC straight to the provider. */
export type VoiceTransportKind = 'websocket' | 'webrtc';

/** The transports a provider takes (declared by the provider; omitted: both). */
export function transportsOf(provider: Pick<VoiceProvider, 'transports'>): readonly VoiceTransportKind[] {
  return provider.transports ?? ['webrtc', 'websocket'];
}

export interface VoiceProvider {
  readonly kind: 'gpt-live' | 'simulator' | 'local';
  /**
   * The transports it takes, in the order a browser should try them. Omitted: both (hosted providers answer WebRTC
   * offers). Parley refuses a mint for one not listed before anything starts, and the widget never tries it.
   */
  readonly transports?: readonly VoiceTransportKind[];
  /** How long this instance's relay holds audio frames (every session's), for /metrics and the bench. */
  readonly residence?: RelayResidence;
  /**
   * Create a WebRTC session for the caller's SDP offer (`POST /v1/live/sessions`, `transport: {type: 'webrtc'}`) with
   * the data channel locked, and attach the sideband. Resolves only once the sideband's `session.started` echoed
   * `allowed_client_events: []` within the lock timeout (the session is hung up otherwise).
   */
  startWebRtcSession(
    config: VoiceSessionConfig,
    offerSdp: string,
    options?: StartSessionOptions,
  ): Promise<VoiceWebRtcStart>;
  /**
   * Take over a running WebRTC session another instance held (it died): attach its sideband anew and wait for
   * `session.started` with the lock still echoed. The caller's media never stopped; the provider replays its recent
   * events after the attach.
   */
  resumeWebRtcSession(providerSessionId: string, options?: StartSessionOptions): Promise<VoiceSession>;
  /**
   * Open a provider session with the data-channel lock (`allowed_client_events: []`). Resolves only when the
   * provider echoed an empty list within the lock timeout; otherwise rejects with a VoiceProviderError.
   */
  startSession(config: VoiceSessionConfig, options?: StartSessionOptions): Promise<VoiceSession>;
}

/** Timing and limits of the adapter. Defaults are the production values; tests shorten them. */
export interface VoiceAdapterTuning {
  /** session.started must echo the lock within this (3 s). */
  lockTimeoutMs?: number;
  /** Wait for session.closed after session.close before giving up on final usage. */
  closeTimeoutMs?: number;
  /** Total time allowed to get a dropped link back. */
  reconnectWindowMs?: number;
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** Socket bytes in flight above which frames wait in the adapter's queue. */
  highWaterBytes?: number;
  /** Adapter queue limit; beyond it the oldest audio frames are dropped. */
  maxQueuedBytes?: number;
  /** Ping interval to detect half-open links; 0 disables. */
  keepaliveMs?: number;
  /**
   * The longest a caller frame waits to share an append (VOICE_PROVIDER_APPEND_MS, default 10). A frame goes at once
   * when nothing is in flight on the provider link; only while the previous write has not drained are frames gathered,
   * and they leave when it drains or at this cap. 0: one append per caller frame, never held.
   */
  appendMs?: number;
  clock?: VoiceClock;
  /** WebRTC sideband: keepalive interval (5 s), re-attach delays (0/1/2/4/8 s) and window (15 s). */
  sidebandPingMs?: number;
  sidebandReattachDelaysMs?: readonly number[];
  sidebandReattachWindowMs?: number;
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
