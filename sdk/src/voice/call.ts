/**
 * VoiceCall: one realtime voice session over Parley's protocol (parley.voice.v1), for Node and browsers.
 *
 *   mint (POST /api/v1/voice/sessions, API key or keyless)        -> sessionId, controlToken, stream.url
 *   gate stream (POST .../gate, NDJSON)                              -> when assistant audio may be heard
 *   media WebSocket (stream.url)                                     -> audio both ways (the mint's format), and
 *                                                                       state / transcript / notices / ended
 *   heartbeats (POST .../heartbeat every heartbeatIntervalMs)        -> healthy | degraded | ended | lost
 *   end (POST .../end; a keepalive variant for page unload)          -> endReason, billableSeconds
 *   (transport 'webrtc': a peer connection to the provider replaces the media socket; webrtc-media.ts)
 *
 * It is the protocol only: audio capture and playback (AudioWorklets in the widget, WAV files in the CLI) belong to
 * the caller, which feeds sendAudio() and listens to `audio`.
 */
import { createParleyClient, type ParleyClient } from '../client.js';
import { ParleyError } from '../errors.js';
import { Emitter } from './emitter.js';
import { bytesPerMsOf, DEFAULT_AUDIO } from './formats.js';
import { followGate } from './gate-follower.js';
import { Heartbeats } from './heartbeats.js';
import { readMediaEvent, toBytes } from './media-events.js';
import { callClientOptions, MediaLink, mediaLostError, mediaUrlOf, newCallStats } from './media-socket.js';
import { now, SpeakingClock } from './speaking.js';
import { GateView } from './gate-view.js';
import { mintBodyOf, sendEndOnUnload } from './requests.js';
import { WebRtcMedia, WebRtcUnavailableError } from './webrtc-media.js';
import type {
  EndReason,
  EndResponse,
  GateDecision,
  MintResponse,
  VoiceCallEvents,
  VoiceCallOptions,
  VoiceCallState,
  VoiceCallStats,
  WebSocketConstructor,
} from './types.js';

const OPEN = 1;

/** One realtime voice call. Create, subscribe with on(), start(), feed sendAudio(), end(). */
export class VoiceCall extends Emitter<VoiceCallEvents> {
  private readonly client: ParleyClient;
  private readonly WebSocketImpl: WebSocketConstructor | undefined;
  private currentState: VoiceCallState = 'idle';
  private minted: MintResponse | undefined;
  private readonly stop = new AbortController();
  private heartbeats: Heartbeats | undefined;
  private readonly speaking = new SpeakingClock(
    () => this.setState(this.computeState()),
    () => this.finished,
  );
  private endPromise: Promise<EndResponse | undefined> | undefined;
  private finished = false;
  private endedByService = false;
  private endReasonValue: EndReason | undefined;
  private readonly gate = new GateView();
  private degraded = false;
  private linkReconnecting = false;
  private media: MediaLink | undefined;
  /** WebRTC calls (`transport: 'webrtc'`): the peer connection to the provider, in place of the media socket. */
  private rtc: WebRtcMedia | undefined;
  private mutedValue = false;
  /** Bytes of one millisecond of the call's audio (speaking time of what arrives). */
  private bytesPerMs = bytesPerMsOf(DEFAULT_AUDIO);
  readonly stats: VoiceCallStats = newCallStats();

  constructor(private readonly options: VoiceCallOptions) {
    super();
    this.client = createParleyClient(callClientOptions(options));
    this.WebSocketImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  }

  get state(): VoiceCallState {
    return this.currentState;
  }
  /** The mint's answer (sessionId, conversationId, controlToken, ...), once started. */
  get session(): MintResponse | undefined {
    return this.minted;
  }
  /** Why the call ended; undefined while it runs, null when the client ended it. */
  get endReason(): EndReason | undefined {
    return this.endReasonValue;
  }
  get isGateOpen(): boolean {
    return this.gate.open;
  }
  get muted(): boolean {
    return this.mutedValue;
  }

  /**
   * Mints the session, opens the gate stream and the media socket, starts heartbeats. Resolves once the media socket
   * is open. A refusal rejects with ParleyError (status, code, reason) and the state becomes `error`.
   */
  async start(): Promise<MintResponse> {
    if (this.currentState !== 'idle') throw new Error(`VoiceCall.start() called in state ${this.currentState}`);
    if (this.WebSocketImpl === undefined && this.options.transport !== 'webrtc') {
      throw new TypeError(
        'No WebSocket implementation: pass options.WebSocket (in Node 20: `import { WebSocket } from "ws"`).',
      );
    }
    this.stats.startedAt = now();
    this.setState('connecting');
    try {
      const body = mintBodyOf(this.options);
      if (this.options.transport === 'webrtc') body.transport = { type: 'webrtc', sdp: await this.offerWebRtc() };
      const t0 = now();
      this.minted = await this.client.POST('/api/v1/voice/sessions', {
        body,
        signal: this.stop.signal,
      });
      this.stats.mintMs = now() - t0;
      this.bytesPerMs = bytesPerMsOf(this.minted.audio as Parameters<typeof bytesPerMsOf>[0]);
    } catch (err) {
      this.fail(err);
      throw err;
    }
    void this.followGate();
    this.startHeartbeats(this.minted);
    try {
      const answer = this.minted.transport?.sdp;
      await (answer !== undefined && this.rtc ? this.rtc.connect(answer) : this.connectMedia(this.minted));
    } catch (err) {
      if (!this.finished) {
        this.fail(err);
        await this.end().catch(() => undefined);
      }
      throw err;
    }
    this.stats.connectMs = now() - this.stats.startedAt;
    this.setState(this.computeState());
    return this.minted;
  }

  /**
   * Sends caller audio in the call's format (`session.audio`), ideally 20 ms, at most 500 ms, whole samples. False when
   * not sent: not connected, or dropped because the send buffer is full (counted in stats.bytesDroppedLocally).
   */
  sendAudio(pcm: ArrayBuffer | ArrayBufferView): boolean {
    const socket = this.media?.socket;
    const bytes = pcm.byteLength;
    if (socket === undefined || socket.readyState !== OPEN || this.finished) return false;
    if (socket.bufferedAmount > (this.options.sendHighWaterBytes ?? 256 * 1024)) {
      this.stats.bytesDroppedLocally += bytes;
      return false;
    }
    socket.send(pcm);
    this.stats.framesSent++;
    this.stats.bytesSent += bytes;
    return true;
  }

  /** Mutes the caller's microphone at the service (the provider hears silence). */
  mute(): void {
    this.sendControl('mute');
  }
  unmute(): void {
    this.sendControl('unmute');
  }

  /** Ends the call (endReason null) with the end route's final answer; safe to repeat, and after a service end. */
  end(): Promise<EndResponse | undefined> {
    this.endPromise ??= (async () => {
      const byClient = !this.finished && !this.endedByService;
      this.teardown();
      if (this.minted === undefined) {
        this.finish(null, 'client', undefined);
        return undefined;
      }
      let answer: EndResponse | undefined;
      try {
        answer = await this.client.POST('/api/v1/voice/sessions/{sessionId}/end', {
          params: { path: { sessionId: this.minted.sessionId } },
          body: this.options.visitorId !== undefined ? { visitorId: this.options.visitorId } : {},
        });
      } catch (err) {
        if (byClient) this.emit('error', err instanceof Error ? err : new Error(String(err)));
      }
      // The service's own word wins over the end route's (which may have been answered for a later, client end).
      const endReason = byClient ? (answer?.endReason ?? null) : (this.endReasonValue ?? answer?.endReason ?? null);
      this.rtc?.close();
      this.finish(endReason, byClient ? 'client' : 'service', answer?.billableSeconds);
      return answer;
    })();
    return this.endPromise;
  }

  /** Page unload: a keepalive end request that outlives the page, socket closed (sync); false if nothing to end. */
  endOnUnload(): boolean {
    if (this.minted === undefined || this.finished) return false;
    sendEndOnUnload(this.options, this.minted.sessionId);
    this.teardown();
    this.finish(null, 'client', undefined);
    return true;
  }

  /** WebRTC: the peer connection with the microphone (options.microphone), and its offer for the mint. */
  private offerWebRtc(): Promise<string> {
    if (this.options.microphone === undefined) throw new WebRtcUnavailableError('WebRTC needs options.microphone.');
    const opts = { microphone: this.options.microphone, ...this.options.webrtc };
    this.rtc = new WebRtcMedia(opts, {
      remote: (stream) => this.emit('remoteAudio', stream),
      link: () => this.setState(this.computeState()),
      transcript: (t) => this.emit('transcript', t),
    });
    return this.rtc.offer();
  }

  // ---- media socket ------------------------------------------------------------------------------------------

  /** Opens the media socket (and reconnects it after a drop while the session lives). */
  private connectMedia(minted: MintResponse): Promise<void> {
    const url = mediaUrlOf(minted.stream?.url ?? '', this.options.baseUrl);
    this.media = new MediaLink(this.WebSocketImpl!, url, this.stop.signal, {
      message: (data) => this.onMediaMessage(data),
      opened: (socket) => {
        if (this.mutedValue) socket.send(JSON.stringify({ type: 'mute' }));
      },
      closed: (code) => this.onMediaClosed(code),
      reconnecting: (on) => {
        this.linkReconnecting = on;
        if (!on) this.stats.mediaReconnects++;
        this.setState(this.computeState());
      },
      lost: () => {
        this.emit('error', mediaLostError());
        void this.end();
      },
      finished: () => this.finished,
    });
    return this.media.connect();
  }

  private onMediaClosed(code: number): void {
    if (this.finished) return;
    if (code === 4001) {
      // Another connection took this session's media over: this client is no longer the call.
      this.emit('notice', { notice: 'replaced' });
      this.teardown();
      this.finish(this.endReasonValue ?? null, 'service', undefined);
      return;
    }
    if (code === 1000) {
      // A normal close comes with an `ended` event; if it did not, the end route tells.
      void this.end();
      return;
    }
    this.setState(this.computeState());
    void this.media?.reconnect();
  }

  private onMediaMessage(data: unknown): void {
    const bytes = toBytes(data);
    if (bytes !== undefined) {
      this.onAssistantAudio(bytes);
      return;
    }
    if (typeof data !== 'string') return;
    const event = readMediaEvent(data);
    switch (event?.type) {
      case 'notice':
        if (event.notice.notice === 'audio_dropped')
          this.stats.assistantDroppedMs += Number(event.notice.droppedMs ?? 0);
        this.emit('notice', event.notice);
        return;
      case 'state':
        if (event.gateSeq !== undefined) this.decide(event.gateSeq, event.gateOpen, undefined);
        if (event.link !== undefined)
          this.linkReconnecting = event.link === 'reconnecting' || event.link === 'connecting';
        if (event.muted !== undefined) this.mutedValue = event.muted;
        this.setState(this.computeState());
        return;
      case 'transcript':
        this.emit('transcript', event.transcript);
        return;
      case 'ended':
        this.serviceEnded(event.endReason);
        return;
      default:
        return;
    }
  }

  private onAssistantAudio(bytes: Uint8Array): void {
    if (!this.gate.open) {
      // The service withholds audio while the gate is closed; a client that honours the gate never plays it.
      this.stats.assistantBytesMuted += bytes.byteLength;
      return;
    }
    if (this.stats.firstAudioMs === undefined && this.stats.startedAt !== undefined)
      this.stats.firstAudioMs = now() - this.stats.startedAt;
    this.stats.assistantBytes += bytes.byteLength;
    this.gate.audioSinceOpened = true;
    this.speaking.heard(bytes.byteLength / this.bytesPerMs);
    if (this.currentState !== 'speaking') this.setState(this.computeState());
    this.emit('audio', bytes);
  }

  private sendControl(type: 'mute' | 'unmute'): void {
    this.mutedValue = type === 'mute';
    this.rtc?.setMuted(this.mutedValue);
    const socket = this.media?.socket;
    if (socket !== undefined && socket.readyState === OPEN) socket.send(JSON.stringify({ type }));
  }

  // ---- gate ---------------------------------------------------------------------------------------------------

  private decide(seq: number, open: boolean, reason: GateDecision['reason'] | undefined): void {
    this.gate.decide(seq, open, reason);
    if (!this.gate.open) this.speaking.silence();
  }

  /** Follows the NDJSON gate stream until the call ends (reopened if it breaks while the session lives). */
  private followGate(): Promise<void> {
    return followGate(this.client, this.minted!, this.stop.signal, {
      decision: (line) => {
        this.stats.gateDecisions++;
        this.decide(line.seq, line.state === 'open', line.reason);
        this.emit('gate', line);
        this.setState(this.computeState());
      },
      end: (endReason) => this.serviceEnded(endReason),
      error: (err) => this.emit('error', err),
      finished: () => this.finished,
    });
  }

  // ---- heartbeats ---------------------------------------------------------------------------------------------

  private startHeartbeats(minted: MintResponse): void {
    this.heartbeats = new Heartbeats(this.client, minted, this.stop.signal, {
      answer: (answer) => {
        this.stats.heartbeats++;
        this.emit('heartbeat', answer);
        if (answer.status === 'ended' || answer.status === 'lost') {
          this.serviceEnded(answer.endReason ?? null);
          return false;
        }
        this.degraded = answer.status === 'degraded';
        this.setState(this.computeState());
        return true;
      },
      failed: () => this.stats.heartbeatFailures++,
      unknown: () => this.serviceEnded(this.endReasonValue ?? null),
      finished: () => this.finished,
    });
    this.heartbeats.schedule(minted.heartbeatIntervalMs);
  }

  // ---- state and teardown -------------------------------------------------------------------------------------

  private computeState(): VoiceCallState {
    if (this.finished) return this.currentState === 'error' ? 'error' : 'ended';
    const connected = (this.media?.connected ?? this.rtc?.connected) === true;
    if (!connected && this.stats.connectMs === undefined) return 'connecting';
    if (this.degraded || this.linkReconnecting || !connected) return 'reconnecting';
    if (this.speaking.speaking) return 'speaking';
    return this.gate.idleState();
  }

  private setState(next: VoiceCallState): void {
    if (next === this.currentState) return;
    const previous = this.currentState;
    this.currentState = next;
    this.emit('state', { state: next, previous });
  }

  private serviceEnded(endReason: EndReason): void {
    if (this.finished || this.endedByService) return;
    this.endedByService = true;
    this.endReasonValue = endReason;
    void this.end();
  }

  /** Stops timers, the gate stream, the media socket (a WebRTC peer closes after the end request: else a drop). */
  private teardown(): void {
    this.heartbeats?.stop();
    this.speaking.stop();
    this.stop.abort();
    this.media?.close();
  }

  private finish(endReason: EndReason, by: 'client' | 'service', billableSeconds: number | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.endReasonValue = endReason;
    this.gate.open = false;
    if (this.currentState !== 'error') this.setState('ended');
    this.emit('ended', { endReason, by, billableSeconds });
  }

  private fail(err: unknown): void {
    this.setState('error');
    this.emit('error', err instanceof Error ? err : new Error(String(err)));
    this.teardown();
    this.rtc?.close();
    this.finished = true;
  }
}
