/**
 * VoiceCall: one realtime voice session over Parley's protocol (parley.voice.v1), for Node and browsers.
 *
 *   mint (POST /api/v1/voice/sessions, API key or keyless)        -> sessionId, controlToken, stream.url
 *   gate stream (POST .../gate, NDJSON)                              -> when assistant audio may be heard
 *   media WebSocket (stream.url)                                     -> binary PCM16LE 24 kHz mono both ways;
 *                                                                       text: state / transcript / notices / ended
 *   heartbeats (POST .../heartbeat every heartbeatIntervalMs)        -> healthy | degraded | ended | lost
 *   end (POST .../end; a keepalive variant for page unload)          -> endReason, billableSeconds
 *
 * It is the protocol only: audio capture and playback (AudioWorklets in the widget, WAV files in the CLI) belong to
 * the caller, which feeds sendAudio() and listens to `audio`.
 */
import { createParleyClient, type ParleyClient } from '../client.js';
import { ParleyError } from '../errors.js';
import { abortableSleep } from '../sleep.js';
import { readNdjson } from '../streams.js';
import { Emitter } from './emitter.js';
import { BYTES_PER_MS } from './pcm.js';
import type {
  EndReason,
  EndResponse,
  GateDecision,
  GateLine,
  HeartbeatResponse,
  MediaNotice,
  MintResponse,
  Transcript,
  VoiceCallEvents,
  VoiceCallOptions,
  VoiceCallState,
  VoiceCallStats,
  WebSocketConstructor,
  WebSocketLike,
} from './types.js';

const OPEN = 1;
const MEDIA_RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000];
/** Audio arrives in network-sized bursts: a gap shorter than this between them does not end `speaking`. */
const SPEAKING_TAIL_MS = 300;

function now(): number {
  return globalThis.performance.now();
}

function toBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  // Node's `ws` with binaryType nodebuffer hands over a Buffer: already a Uint8Array, no view to allocate per chunk.
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

/** One realtime voice call. Create, subscribe with on(), start(), feed sendAudio(), end(). */
export class VoiceCall extends Emitter<VoiceCallEvents> {
  private readonly client: ParleyClient;
  private readonly WebSocketImpl: WebSocketConstructor | undefined;
  private currentState: VoiceCallState = 'idle';
  private minted: MintResponse | undefined;
  private socket: WebSocketLike | undefined;
  private readonly stop = new AbortController();
  private heartbeatTimer: ReturnType<typeof setTimeout> | undefined;
  private speakingTimer: ReturnType<typeof setTimeout> | undefined;
  private endPromise: Promise<EndResponse | undefined> | undefined;
  private finished = false;
  private endedByService = false;
  private endReasonValue: EndReason | undefined;
  // The gate is followed on both channels (NDJSON stream: the contract, with reasons; media `state` events: ordered
  // with the audio). The decision with the higher seq wins.
  private gateSeq = -1;
  private gateOpen = false;
  private gateReason: GateDecision['reason'] = 'start';
  private audioSinceGateOpened = false;
  private speakingUntil = 0;
  private degraded = false;
  private linkReconnecting = false;
  private mediaConnected = false;
  private mutedValue = false;
  readonly stats: VoiceCallStats = {
    startedAt: undefined,
    mintMs: undefined,
    connectMs: undefined,
    firstAudioMs: undefined,
    framesSent: 0,
    bytesSent: 0,
    bytesDroppedLocally: 0,
    assistantBytes: 0,
    assistantBytesMuted: 0,
    assistantDroppedMs: 0,
    gateDecisions: 0,
    heartbeats: 0,
    heartbeatFailures: 0,
    mediaReconnects: 0,
  };

  constructor(private readonly options: VoiceCallOptions) {
    super();
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey === undefined && options.signature !== undefined)
      headers['x-parley-signature'] = options.signature;
    this.client = createParleyClient({
      baseUrl: options.baseUrl,
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
      headers,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      onDeprecation: () => undefined,
    });
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
    return this.gateOpen;
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
    if (this.WebSocketImpl === undefined) {
      throw new TypeError(
        'No WebSocket implementation: pass options.WebSocket (in Node 20: `import { WebSocket } from "ws"`).',
      );
    }
    this.stats.startedAt = now();
    this.setState('connecting');
    const o = this.options;
    try {
      const t0 = now();
      this.minted = await this.client.POST('/api/v1/voice/sessions', {
        body: {
          assistantId: o.assistantId,
          capabilities: o.capabilities ?? ['heartbeat', 'playback_gate'],
          ...(o.recordingConsent !== undefined ? { recordingConsent: o.recordingConsent } : {}),
          ...(o.visitorId !== undefined ? { visitorId: o.visitorId } : {}),
          ...(o.conversationId !== undefined ? { conversationId: o.conversationId } : {}),
          ...(o.source !== undefined ? { source: o.source } : {}),
        },
        signal: this.stop.signal,
      });
      this.stats.mintMs = now() - t0;
    } catch (err) {
      this.fail(err);
      throw err;
    }
    void this.followGate();
    this.scheduleHeartbeat(this.minted.heartbeatIntervalMs);
    try {
      await this.connectMedia();
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
   * Sends caller audio: PCM16LE mono 24 kHz, ideally 20 ms (960 bytes) per call, at most 24,000 bytes, even length.
   * Returns false when it was not sent: not connected, or dropped because the socket's send buffer is full (a slow
   * network drops old caller audio rather than queueing it without bound; counted in stats.bytesDroppedLocally).
   */
  sendAudio(pcm: ArrayBuffer | ArrayBufferView): boolean {
    const socket = this.socket;
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

  /**
   * Ends the call (endReason null) and resolves with the end route's final answer. Safe to call more than once and
   * after the service ended the call (then it resolves with the service's final answer while it is kept).
   */
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
      this.finish(endReason, byClient ? 'client' : 'service', answer?.billableSeconds);
      return answer;
    })();
    return this.endPromise;
  }

  /**
   * For page unload (pagehide / beforeunload): fires the end request with fetch `keepalive` so it outlives the page,
   * and closes the socket. Synchronous; the answer is not awaited. Returns false when there was nothing to end.
   */
  endOnUnload(): boolean {
    if (this.minted === undefined || this.finished) return false;
    const o = this.options;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...o.headers };
    if (o.apiKey !== undefined) headers['authorization'] = `Bearer ${o.apiKey}`;
    else if (o.signature !== undefined) headers['x-parley-signature'] = o.signature;
    const url = `${o.baseUrl.replace(/\/+$/, '')}/api/v1/voice/sessions/${encodeURIComponent(this.minted.sessionId)}/end`;
    const doFetch = o.fetch ?? globalThis.fetch;
    void doFetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(o.visitorId !== undefined ? { visitorId: o.visitorId } : {}),
      keepalive: true,
    }).catch(() => undefined);
    this.teardown();
    this.finish(null, 'client', undefined);
    return true;
  }

  // ---- media socket ------------------------------------------------------------------------------------------

  private mediaUrl(): string {
    const minted = this.minted!;
    const base =
      this.options.baseUrl === ''
        ? (globalThis as { location?: { href: string } }).location?.href
        : this.options.baseUrl;
    const url = new URL(minted.stream.url, base);
    url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
    return url.toString();
  }

  /** Opens the media socket; resolves on open, rejects if it closes first. */
  private connectMedia(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = new this.WebSocketImpl!(this.mediaUrl());
      socket.binaryType = 'arraybuffer';
      this.socket = socket;
      let opened = false;
      socket.onopen = () => {
        opened = true;
        this.mediaConnected = true;
        if (this.mutedValue) socket.send(JSON.stringify({ type: 'mute' }));
        resolve();
      };
      socket.onmessage = (event: { data: unknown }) => this.onMediaMessage(event.data);
      socket.onerror = () => undefined; // the close that follows says what happened
      socket.onclose = (event: { code?: number; reason?: string }) => {
        if (this.socket !== socket) return;
        this.mediaConnected = false;
        this.socket = undefined;
        if (!opened) {
          reject(
            new ParleyError({
              status: 0,
              code: 'MEDIA_CONNECT_FAILED',
              message: `the media socket closed before opening (${event.code ?? '?'})`,
            }),
          );
          return;
        }
        this.onMediaClosed(event.code ?? 1006);
      };
    });
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
    // Dropped (network): the session lives on at the service; reconnect the media socket while it does.
    this.setState(this.computeState());
    void this.reconnectMedia();
  }

  private async reconnectMedia(): Promise<void> {
    for (const delay of MEDIA_RECONNECT_DELAYS_MS) {
      this.linkReconnecting = true;
      this.setState(this.computeState());
      try {
        await abortableSleep(delay, this.stop.signal);
      } catch {
        return;
      }
      if (this.finished) return;
      try {
        await this.connectMedia();
        this.stats.mediaReconnects++;
        this.linkReconnecting = false;
        this.setState(this.computeState());
        return;
      } catch {
        // try again after the next delay
      }
    }
    this.emit(
      'error',
      new ParleyError({ status: 0, code: 'MEDIA_LOST', message: 'the media socket could not be reconnected' }),
    );
    void this.end();
  }

  private onMediaMessage(data: unknown): void {
    const bytes = toBytes(data);
    if (bytes !== undefined) {
      this.onAssistantAudio(bytes);
      return;
    }
    if (typeof data !== 'string') return;
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return;
    }
    switch (event['type']) {
      case 'state':
        if (typeof event['notice'] === 'string') {
          if (event['notice'] === 'audio_dropped') this.stats.assistantDroppedMs += Number(event['droppedMs'] ?? 0);
          this.emit('notice', event as unknown as MediaNotice);
          return;
        }
        if (typeof event['gateSeq'] === 'number') this.decide(event['gateSeq'], event['gate'] === 'open', undefined);
        if (typeof event['link'] === 'string')
          this.linkReconnecting = event['link'] === 'reconnecting' || event['link'] === 'connecting';
        if (typeof event['muted'] === 'boolean') this.mutedValue = event['muted'];
        this.setState(this.computeState());
        return;
      case 'transcript':
        this.emit('transcript', {
          role: event['role'] === 'assistant' ? 'assistant' : 'user',
          text: String(event['text'] ?? ''),
          startMs: Number(event['startMs'] ?? 0),
          endMs: Number(event['endMs'] ?? 0),
        } satisfies Transcript);
        return;
      case 'ended':
        this.serviceEnded((event['endReason'] as EndReason | undefined) ?? null);
        return;
      default:
        return;
    }
  }

  private onAssistantAudio(bytes: Uint8Array): void {
    if (!this.gateOpen) {
      // The service withholds audio while the gate is closed; a client that honours the gate never plays it.
      this.stats.assistantBytesMuted += bytes.byteLength;
      return;
    }
    if (this.stats.firstAudioMs === undefined && this.stats.startedAt !== undefined)
      this.stats.firstAudioMs = now() - this.stats.startedAt;
    this.stats.assistantBytes += bytes.byteLength;
    this.audioSinceGateOpened = true;
    // Speaking lasts as long as the audio takes to play from now (or from the end of what is already queued).
    const t = now();
    this.speakingUntil = Math.max(this.speakingUntil, t) + bytes.byteLength / BYTES_PER_MS;
    // One timer at most, armed once per stretch of speech and re-armed only when it fires early (no timer work per
    // chunk: a load generator receives thousands of chunks a second).
    if (this.speakingTimer === undefined) this.armSpeakingTimer(t);
    if (this.currentState !== 'speaking') this.setState(this.computeState());
    this.emit('audio', bytes);
  }

  private armSpeakingTimer(t: number): void {
    this.speakingTimer = setTimeout(
      () => {
        this.speakingTimer = undefined;
        const at = now();
        if (!this.finished && at < this.speakingUntil + SPEAKING_TAIL_MS) this.armSpeakingTimer(at);
        else this.setState(this.computeState());
      },
      Math.ceil(this.speakingUntil + SPEAKING_TAIL_MS - t) + 1,
    );
  }

  private sendControl(type: 'mute' | 'unmute'): void {
    this.mutedValue = type === 'mute';
    const socket = this.socket;
    if (socket !== undefined && socket.readyState === OPEN) socket.send(JSON.stringify({ type }));
  }

  // ---- gate ---------------------------------------------------------------------------------------------------

  private decide(seq: number, open: boolean, reason: GateDecision['reason'] | undefined): void {
    if (seq < this.gateSeq) return;
    if (open && (!this.gateOpen || seq > this.gateSeq)) this.audioSinceGateOpened = false;
    this.gateSeq = seq;
    this.gateOpen = open;
    if (reason !== undefined) this.gateReason = reason;
    if (!open) this.speakingUntil = 0;
  }

  /** Follows the NDJSON gate stream until the call ends; reopens it if it breaks while the session lives. */
  private async followGate(): Promise<void> {
    for (let attempt = 0; !this.finished && attempt < 5; attempt++) {
      try {
        const res = await this.client.stream('post', '/api/v1/voice/sessions/{sessionId}/gate', {
          params: { path: { sessionId: this.minted!.sessionId } },
          body: { token: this.minted!.controlToken },
          signal: this.stop.signal,
          headers: { accept: 'application/x-ndjson' },
        });
        if (res.body === null) return;
        attempt = 0;
        for await (const line of readNdjson<GateLine>(res.body)) {
          if (line.type === 'gate') {
            this.stats.gateDecisions++;
            this.decide(line.seq, line.state === 'open', line.reason);
            this.emit('gate', line);
            this.setState(this.computeState());
          } else if (line.type === 'end') {
            this.serviceEnded(line.endReason ?? null);
            return;
          }
        }
      } catch (err) {
        if (this.finished || this.stop.signal.aborted) return;
        if (err instanceof ParleyError && (err.status === 404 || err.status === 421)) {
          this.emit('error', err);
          return;
        }
      }
      if (this.finished) return;
      try {
        await abortableSleep(250 * 2 ** attempt, this.stop.signal);
      } catch {
        return;
      }
    }
  }

  // ---- heartbeats ---------------------------------------------------------------------------------------------

  private scheduleHeartbeat(afterMs: number | undefined): void {
    if (afterMs === undefined || this.finished) return;
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = setTimeout(() => void this.beat(), afterMs);
  }

  private async beat(): Promise<void> {
    const minted = this.minted!;
    let next = minted.heartbeatIntervalMs;
    try {
      const answer: HeartbeatResponse = await this.client.POST('/api/v1/voice/sessions/{sessionId}/heartbeat', {
        params: { path: { sessionId: minted.sessionId } },
        body: { token: minted.controlToken },
        signal: this.stop.signal,
      });
      if (this.finished) return;
      this.stats.heartbeats++;
      this.emit('heartbeat', answer);
      if (answer.status === 'ended' || answer.status === 'lost') {
        this.serviceEnded(answer.endReason ?? null);
        return;
      }
      this.degraded = answer.status === 'degraded';
      this.setState(this.computeState());
      next = answer.nextHeartbeatMs ?? next;
    } catch (err) {
      if (this.finished || this.stop.signal.aborted) return;
      this.stats.heartbeatFailures++;
      if (err instanceof ParleyError && err.status === 404) {
        // The session is unknown (over for long, or never ours): nothing left to supervise.
        this.serviceEnded(this.endReasonValue ?? null);
        return;
      }
      if (err instanceof ParleyError && err.retryAfterMs !== undefined) next = Math.max(next ?? 0, err.retryAfterMs);
    }
    this.scheduleHeartbeat(next);
  }

  // ---- state and teardown -------------------------------------------------------------------------------------

  private computeState(): VoiceCallState {
    if (this.finished) return this.currentState === 'error' ? 'error' : 'ended';
    if (!this.mediaConnected && this.stats.connectMs === undefined) return 'connecting';
    if (this.degraded || this.linkReconnecting || !this.mediaConnected) return 'reconnecting';
    if (now() < this.speakingUntil + SPEAKING_TAIL_MS) return 'speaking';
    if (this.gateOpen) return this.audioSinceGateOpened ? 'listening' : 'thinking';
    return this.gateReason === 'pending_backend' ? 'thinking' : 'listening';
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
    // Ask the end route for the final answer (billable seconds); it answers the service's end for 5 minutes.
    void this.end();
  }

  /** Stops timers, the gate stream and the media socket. */
  private teardown(): void {
    clearTimeout(this.heartbeatTimer);
    clearTimeout(this.speakingTimer);
    this.speakingTimer = undefined;
    this.stop.abort();
    const socket = this.socket;
    this.socket = undefined;
    this.mediaConnected = false;
    if (socket !== undefined && socket.readyState <= OPEN) {
      try {
        socket.close(1000, 'ended');
      } catch {
        // already closing
      }
    }
  }

  private finish(endReason: EndReason, by: 'client' | 'service', billableSeconds: number | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.endReasonValue = endReason;
    this.gateOpen = false;
    if (this.currentState !== 'error') this.setState('ended');
    this.emit('ended', { endReason, by, billableSeconds });
  }

  private fail(err: unknown): void {
    this.setState('error');
    this.emit('error', err instanceof Error ? err : new Error(String(err)));
    this.teardown();
    this.finished = true;
  }
}
