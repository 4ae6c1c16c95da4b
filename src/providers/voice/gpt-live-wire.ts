import { WebSocket } from 'ws';
import type { Logger } from '../../log/index.js';
import type { VoiceProviderError } from './errors.js';
import { EventDedupe } from './event-dedupe.js';
import { errorFromEvent, readBackendEvent, readCloseReason, readDelegation, readTranscript } from './inbound.js';
import { decodeInputAudioFast, decodeOutputAudioFast, parseServerFrame, type WireEvent } from './protocol.js';
import { residenceNow, type RelayResidence } from './residence.js';
import { openProviderSocket, type ProviderSocketEvents } from './provider-socket.js';
import type { VoiceCloseReason, VoiceSessionHandlers, VoiceSessionStats } from './types.js';

/** What the wire hands the session state machine (GptLiveSession). */
export interface WireSink {
  /** The provider's session id (for logs). */
  id(): string;
  /** Session events are taken (open or closing); before that only `session.started` and a refusal count. */
  live(): boolean;
  /** The current socket opened. */
  opened(ws: WebSocket): void;
  started(event: WireEvent): void;
  /** The upgrade was refused, or the provider answered a (re)start with an error event. */
  refused(error: VoiceProviderError): void;
  /** The current socket closed (it is already forgotten). */
  closed(code: number): void;
  usage(raw: unknown): void;
  providerClosed(reason: VoiceCloseReason, rawUsage: unknown): void;
  providerError(error: VoiceProviderError): void;
}

/**
 * The wire side of one GPT-Live session: the current primary WebSocket (one at a time; stale sockets' events are
 * ignored), its keepalive probe, and inbound framing: output audio on the byte-level fast path, other frames parsed,
 * deduplicated by event_id (a resumed link may replay) and turned into handler calls or sink calls.
 */
export class GptLiveWire {
  ws: WebSocket | null = null;
  private alive = true;
  /** Something arrived since the last keepalive tick: the link is proven alive without a ping. */
  private heard = false;
  private readonly dedupe = new EventDedupe();
  /** The backend response being streamed: its function calls are grouped under it. */
  private responseId = '';

  constructor(
    private readonly headers: Record<string, string>,
    private readonly stats: VoiceSessionStats,
    private readonly h: VoiceSessionHandlers,
    private readonly sink: WireSink,
    private readonly log: Logger | undefined,
    /** Stamped with each message's read time, for the pump to measure the assistant audio's residence. */
    private readonly residence?: RelayResidence,
  ) {}

  open(url: string): void {
    this.ws = openProviderSocket(url, this.headers, this.events);
  }

  /** Send now if the current socket is open (bypassing the outgoing queue). */
  sendIfOpen(frame: string): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(frame);
  }

  /** Forget the current socket without a close handshake. */
  drop(): void {
    const ws = this.ws;
    this.ws = null;
    ws?.terminate();
  }

  /** Forget the current socket: a normal close when it is open, else terminated. */
  shut(): void {
    const ws = this.ws;
    this.ws = null;
    if (ws !== null) {
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else ws.terminate();
    }
  }

  /** A fresh link counts as alive until a keepalive ping goes unanswered. */
  markAlive(): void {
    this.alive = true;
    this.heard = false;
  }

  /**
   * Keepalive tick: no pong since the last ping is a half-open link; terminating it lets the reconnect policy act.
   * A link that delivered anything since the last tick needs no ping (a talking provider sends usage every second),
   * so a busy instance writes no keepalive frames at all; a silent link is pinged, and cut a tick later.
   */
  probe(): void {
    const ws = this.ws;
    if (ws === null) return;
    if (this.heard) {
      this.heard = false;
      this.alive = true;
      return;
    }
    if (!this.alive) ws.terminate();
    else {
      this.alive = false;
      ws.ping();
    }
  }

  /** One events object per session (not per socket): each callback checks it is about the current socket. */
  private readonly events: ProviderSocketEvents = {
    onOpen: (ws) => {
      if (ws === this.ws) this.sink.opened(ws);
    },
    onMessage: (ws, data, isBinary) => {
      if (ws !== this.ws) return;
      // Anything heard from the provider proves the link is alive, like a pong.
      this.alive = true;
      this.heard = true;
      this.onMessage(data, isBinary);
    },
    onPong: (ws) => {
      if (ws === this.ws) this.alive = true;
    },
    onRefused: (ws, error) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.sink.refused(error);
    },
    onClose: (ws, code) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.sink.closed(code);
    },
    // Only the message: the error's request carries the Authorization header.
    onError: (ws, err) => {
      if (ws === this.ws)
        this.log?.debug({ sessionId: this.sink.id(), err: err.message }, 'voice provider socket error');
    },
  };

  private onMessage(data: Buffer, isBinary: boolean): void {
    const live = this.sink.live();
    if (live && !isBinary) {
      if (this.residence !== undefined) this.residence.inboundReadAt = residenceNow();
      const pcm = decodeOutputAudioFast(data);
      if (pcm !== undefined) {
        this.stats.audioChunksReceived++;
        this.h.onOutputAudio?.(pcm);
        return;
      }
      // A sideband's reflected caller audio (50 frames a second): no parsed object either.
      if (this.h.onInputAudio !== undefined) {
        const input = decodeInputAudioFast(data);
        if (input !== undefined) return this.h.onInputAudio(input);
      }
    }
    const event = isBinary ? undefined : parseServerFrame(data);
    if (event === undefined) {
      this.stats.garbageFrames++;
      this.log?.debug({ sessionId: this.sink.id(), bytes: data.length }, 'voice provider sent an unreadable frame');
      return;
    }
    if (event.type === 'session.started') return this.sink.started(event);
    if (!live) {
      // Before (re)start only a refusal matters; anything else is not remembered, so a later replay still counts.
      if (event.type === 'error') this.sink.refused(errorFromEvent(event, true));
      return;
    }
    if (typeof event.event_id === 'string' && !this.dedupe.firstSeen(event.event_id)) {
      this.stats.duplicateEvents++;
      return;
    }
    this.dispatch(event);
  }

  private dispatch(event: WireEvent): void {
    switch (event.type) {
      case 'session.output_audio.delta':
        if (typeof event.delta !== 'string') return void this.stats.garbageFrames++;
        this.stats.audioChunksReceived++;
        this.h.onOutputAudio?.(Buffer.from(event.delta, 'base64'));
        return;
      case 'session.input_transcript.delta':
      case 'session.output_transcript.delta': {
        const delta = readTranscript(event);
        if (delta === undefined) return void this.stats.garbageFrames++;
        if (event.type === 'session.input_transcript.delta') this.h.onInputTranscript?.(delta);
        else this.h.onOutputTranscript?.(delta);
        return;
      }
      case 'session.delegation.created': {
        const request = readDelegation(event);
        if (request === undefined) return void this.stats.garbageFrames++;
        this.h.onDelegation?.(request);
        return;
      }
      case 'session.input_audio.append':
        // Only a sideband receives this: the caller's audio as the provider got it over WebRTC.
        if (typeof event.audio === 'string') this.h.onInputAudio?.(Buffer.from(event.audio, 'base64'));
        return;
      case 'response.event':
        return this.onBackendEvent(event);
      case 'session.usage.updated':
        return this.sink.usage(event.usage);
      case 'session.closed':
        return this.sink.providerClosed(readCloseReason(event), event.usage);
      case 'error':
        return this.sink.providerError(errorFromEvent(event, false));
      default:
        // Acknowledgements and info notices carry nothing the relay needs.
        return;
    }
  }

  private onBackendEvent(event: WireEvent): void {
    const backend = readBackendEvent(event);
    if (backend === undefined) return;
    if (backend.kind === 'created') this.responseId = backend.responseId;
    else if (backend.kind === 'done') this.h.onBackendResponseDone?.(backend.responseId);
    else {
      const delegationId = typeof event.delegation_id === 'string' ? event.delegation_id : undefined;
      const { callId, name, arguments: args } = backend;
      this.h.onFunctionCall?.({ callId, name, arguments: args, responseId: this.responseId, delegationId });
    }
  }
}
