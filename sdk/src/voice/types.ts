import type { Operation, RequestBody, SuccessBody } from '../types.js';
import type { AudioFormat } from './formats.js';

export type MintRequest = RequestBody<Operation<'/api/v1/voice/sessions', 'post'>>;
export type MintResponse = SuccessBody<Operation<'/api/v1/voice/sessions', 'post'>>;
export type HeartbeatResponse = SuccessBody<Operation<'/api/v1/voice/sessions/{sessionId}/heartbeat', 'post'>>;
export type EndResponse = SuccessBody<Operation<'/api/v1/voice/sessions/{sessionId}/end', 'post'>>;
/** One line of the gate stream (NDJSON): a decision, a keepalive, or the end. */
export type GateLine = SuccessBody<Operation<'/api/v1/voice/sessions/{sessionId}/gate', 'post'>>;
export type GateDecision = Extract<GateLine, { type: 'gate' }>;
/** Why a session ended; null when the client ended it (docs/voice-protocol.md, end reasons). */
export type EndReason = EndResponse['endReason'];

/**
 * What the call is doing, as a user interface shows it:
 * idle (not started) -> connecting (mint, media socket) -> listening | thinking | speaking, reconnecting while the
 * service re-establishes the provider link, then ended (with an end reason) or error (could not start / broke).
 */
export type VoiceCallState =
  'idle' | 'connecting' | 'listening' | 'thinking' | 'speaking' | 'reconnecting' | 'ended' | 'error';

export interface Transcript {
  role: 'user' | 'assistant';
  text: string;
  startMs: number;
  endMs: number;
}

/** Notices of the media socket (parley.voice.v1). */
export type MediaNotice =
  | { notice: 'audio_dropped'; droppedBytes: number; droppedMs: number }
  | { notice: 'frame_refused'; why?: string; bytes?: number; maxFrameBytes?: number }
  | { notice: 'replaced' };

export interface VoiceCallEnded {
  endReason: EndReason;
  /** Who ended it: this client (end()), or the service (gate end line, media `ended`, heartbeat ended/lost). */
  by: 'client' | 'service';
  /** From the end route's final answer, when it could be read. */
  billableSeconds: number | undefined;
}

/** Events of a {@link VoiceCall}, name -> payload. */
export interface VoiceCallEvents {
  state: { state: VoiceCallState; previous: VoiceCallState };
  /**
   * Assistant audio the gate allows to be heard, in the call's format (PCM16LE mono 24 kHz unless `audio` asked for
   * another). Play it; VoiceCall does no audio I/O.
   */
  audio: Uint8Array;
  /** Captions: the caller's words and the assistant's (assistant captions only while the gate is open). */
  transcript: Transcript;
  /** Every playback gate decision (stream order; the latest decides). */
  gate: GateDecision;
  heartbeat: HeartbeatResponse;
  notice: MediaNotice;
  /** The call ended, whoever ended it: emitted once for a call that started (a failed start emits `error` only). */
  ended: VoiceCallEnded;
  /** Something failed: mint refusals (ParleyError) during start(), a broken media socket or gate stream. */
  error: Error;
  /** WebRTC calls: the assistant's voice as a MediaStream; play it only while the gate is open (isGateOpen). */
  remoteAudio: RtcMediaStream;
}

export interface VoiceCallStats {
  /** When start() was called (performance.now() ms). */
  startedAt: number | undefined;
  /** Mint round trip (ms). */
  mintMs: number | undefined;
  /** From start() to the media socket open (ms). */
  connectMs: number | undefined;
  /** From start() to the first assistant audio heard (ms). */
  firstAudioMs: number | undefined;
  framesSent: number;
  bytesSent: number;
  /** Caller audio this client dropped because the socket's send buffer was full (bytes). */
  bytesDroppedLocally: number;
  /** Assistant audio heard (bytes). */
  assistantBytes: number;
  /** Assistant audio that arrived while the gate was closed (the service withholds it; should stay 0). */
  assistantBytesMuted: number;
  /** Assistant audio the service dropped for this slow reader (audio_dropped notices, ms). */
  assistantDroppedMs: number;
  gateDecisions: number;
  heartbeats: number;
  heartbeatFailures: number;
  mediaReconnects: number;
}

/** The subset of the WHATWG WebSocket a VoiceCall uses: browsers' WebSocket and the `ws` package both fit. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | ArrayBuffer | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null; // eslint-disable-line @typescript-eslint/no-explicit-any
  onmessage: ((event: any) => void) | null; // eslint-disable-line @typescript-eslint/no-explicit-any
  onclose: ((event: any) => void) | null; // eslint-disable-line @typescript-eslint/no-explicit-any
  onerror: ((event: any) => void) | null; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export interface VoiceCallOptions {
  /** Parley's base URL, e.g. https://parley.example.com ('' in a browser page served by Parley). */
  baseUrl: string;
  /** Public asst_ id (keyless), or either id of an assistant the key owns (API key). */
  assistantId: string;
  /** An API key with the voice scope. Omit for keyless widget/playground calls. */
  apiKey?: string;
  /** Keyless callers: the visitor (8-80 chars); a newer session of the same visitor supersedes this one. */
  visitorId?: string;
  /** Keyless callers of assistants that require signing: `t=...,v1=...` from POST /api/v1/widget/sign or your server. */
  signature?: string;
  /** Extra headers for every HTTP call (from Node, keyless callers send `origin`). */
  headers?: Record<string, string>;
  /** Must be true when the session would be recorded and consent is required (always for keyless callers). */
  recordingConsent?: boolean;
  conversationId?: string;
  source?: 'api' | 'widget' | 'playground';
  /** Default ['heartbeat', 'playback_gate'] (every client must declare playback_gate). */
  capabilities?: Array<'heartbeat' | 'playback_gate'>;
  /** WebSocket implementation. Default globalThis.WebSocket; in Node 20 pass `WebSocket` from the `ws` package. */
  WebSocket?: WebSocketConstructor;
  fetch?: typeof fetch;
  /**
   * The call's audio both ways: `{format: 'pcm16', sampleRateHz: 16000 | 24000}` (default 24000), or G.711
   * `{format: 'pcmu' | 'pcma', sampleRateHz: 8000}`. sendAudio() takes it and `audio` events carry it.
   */
  audio?: AudioFormat;
  /** Caller audio is dropped (and counted) instead of queued once the socket holds this much unsent. Default 256 KiB. */
  sendHighWaterBytes?: number;
  /**
   * Browsers: `webrtc` connects the microphone straight to the voice provider (a peer connection; Parley passes the
   * SDP and supervises from the server), `websocket` (default) relays audio through Parley's media socket. A WebRTC
   * call whose ICE does not connect in time ends and start() rejects with WebRtcUnavailableError (code
   * WEBRTC_UNAVAILABLE): fall back by starting a new VoiceCall with `websocket`, as the widget's `auto` does.
   */
  transport?: 'websocket' | 'webrtc';
  /** WebRTC: the microphone stream (getUserMedia); sendAudio() does not apply, the `remoteAudio` event carries the voice. */
  microphone?: RtcMediaStream;
  /** WebRTC timings (connect 3000 ms, ICE gathering 2000 ms) and an RTCPeerConnection implementation. */
  webrtc?: Omit<WebRtcMediaOptions, 'microphone'>;
}

/** The parts of the browser's WebRTC API used here, declared: the SDK also compiles without the DOM library. */
export interface RtcTrack {
  enabled: boolean;
}
export interface RtcMediaStream {
  getAudioTracks(): RtcTrack[];
}
export interface RtcDescription {
  type: string;
  sdp?: string | undefined;
}
export interface RtcPeer {
  addTrack(track: RtcTrack, stream: RtcMediaStream): unknown;
  createDataChannel(label: string): { onmessage: ((event: { data: unknown }) => void) | null };
  ontrack: ((event: { streams: readonly RtcMediaStream[]; track: RtcTrack }) => void) | null;
  oniceconnectionstatechange: (() => void) | null;
  readonly iceConnectionState: string;
  readonly iceGatheringState: string;
  readonly localDescription: RtcDescription | null;
  createOffer(): Promise<RtcDescription>;
  setLocalDescription(description: RtcDescription): Promise<void>;
  setRemoteDescription(description: { type: 'answer'; sdp: string }): Promise<void>;
  addEventListener(type: 'icegatheringstatechange' | 'iceconnectionstatechange', listener: () => void): void;
  close(): void;
}
export type RtcPeerConstructor = new () => RtcPeer;

export interface WebRtcMediaOptions {
  /** The microphone (getUserMedia), its audio tracks sent to the provider. */
  microphone: RtcMediaStream;
  /** ICE must connect within this long after the answer, or the call counts as WebRTC-unavailable. Default 3000. */
  connectTimeoutMs?: number;
  /** Offer without waiting longer than this for ICE gathering (the offer carries what was gathered). Default 2000. */
  gatherTimeoutMs?: number;
  RTCPeerConnection?: RtcPeerConstructor;
}
