import type { RealtimeSocket } from '../../../http/index.js';
import type { VoiceClock, VoiceTranscriptDelta } from '../../../providers/voice/index.js';
import type { EndReason } from '../../end-reasons.js';
import type { RelayLink } from '../../pump/link.js';
import {
  MediaPump,
  type CallerLeg,
  type PumpEvents,
  type PumpPhase,
  type PumpStateView,
} from '../../pump/media-pump.js';
import type { RelayOptions, RelayStats, RelayTap } from '../../pump/options.js';
import type { CallTimeline } from '../../timeline/call-timeline.js';
import { encode, readCallerText } from './codec.js';

/**
 * The media relay of one `parley.voice.v1` WebSocket: the shared {@link MediaPump} with this transport's wire codec
 * in front of it. Caller binary frames are audio in the call's format (the pump checks their size); caller text
 * frames other than `{"type":"mute"}` / `{"type":"unmute"}` are dropped and counted, so nothing the caller sends
 * reaches the provider as a control event. What the pump reports leaves as the protocol's JSON events
 * (docs/voice-protocol.md). Presence: the socket opening attaches the caller, its close detaches it.
 */
export type RelayPhase = PumpPhase;

/** Close codes the relay uses besides 1000 (ended). */
export const RELAY_CLOSE = { ended: 1000, replaced: 4001 } as const;

/**
 * The relay is both sides of its pump: the caller leg (the socket) and the pump's events (this protocol's JSON), as
 * methods, so a connection allocates no closures.
 */
export class MediaRelay implements CallerLeg, PumpEvents {
  private readonly pump: MediaPump;
  private muted = false;

  constructor(
    readonly socket: RealtimeSocket<unknown>,
    readonly link: RelayLink,
    clock: Pick<VoiceClock, 'now'>,
    options: Partial<RelayOptions> = {},
    tap?: RelayTap,
    /** The call's timeline: this transport's own events (mute, unmute, replaced, audio_dropped, frame_refused). */
    private readonly timeline?: CallTimeline,
  ) {
    this.pump = new MediaPump(this, link, this, clock, options, tap);
  }

  get stats(): RelayStats {
    return this.pump.stats;
  }

  get state(): RelayPhase {
    return this.pump.state;
  }

  /** Bytes of assistant audio waiting in the ring. */
  get pendingBytes(): number {
    return this.pump.pendingBytes;
  }

  /** Start relaying: the caller is here (presence), and the first state goes out. */
  start(): void {
    this.pump.start();
  }

  /** A caller message. `data` is valid only during this call (uWS): it is consumed synchronously. */
  onMessage(data: ArrayBuffer, binary: boolean): void {
    if (this.pump.state !== 'open') return;
    if (binary) {
      this.pump.callerAudio(Buffer.from(data, 0, data.byteLength));
      return;
    }
    const command = readCallerText(data, this.pump.options.maxTextFrameBytes);
    if (command === undefined) this.pump.callerFrameDropped();
    else this.pump.setMuted(command === 'mute');
  }

  /** The caller's socket drained some of its backlog. */
  onDrain(): void {
    this.pump.onDrain();
  }

  /** A newer media socket for the same session took over: leave without telling the session we are gone. */
  replace(): void {
    if (!this.pump.replace()) return;
    this.timeline?.record('replaced');
    this.sendEvent(encode.replaced());
    this.socket.end(RELAY_CLOSE.replaced, 'replaced by a newer connection');
  }

  /** The caller's socket closed (any reason): the caller is gone unless it was replaced or the call ended. */
  onClose(): void {
    this.pump.onClose();
  }

  // ---- the caller leg (CallerLeg) ----------------------------------------------------------------------------

  sendAudio(audio: Uint8Array): 'sent' | 'backpressure' | 'dropped' {
    return this.socket.send(audio, true);
  }

  bufferedAmount(): number {
    return this.socket.bufferedAmount();
  }

  // ---- the pump's events, in this protocol (PumpEvents) ------------------------------------------------------

  stateChanged(view: PumpStateView): void {
    if (view.muted !== this.muted) {
      this.muted = view.muted;
      this.timeline?.record(view.muted ? 'mute' : 'unmute');
    }
    this.sendEvent(encode.state(view));
  }

  transcript(role: 'user' | 'assistant', delta: VoiceTranscriptDelta): void {
    this.sendEvent(encode.transcript(role, delta));
  }

  audioDropped(droppedBytes: number, droppedMs: number): void {
    this.timeline?.record('audio_dropped', { droppedMs });
    this.sendEvent(encode.audioDropped(droppedBytes, droppedMs));
  }

  frameRefused(why: 'too_large' | 'not_whole_samples', bytes: number, maxFrameBytes: number): void {
    this.timeline?.record('frame_refused', { why, bytes });
    this.sendEvent(encode.frameRefused(why, bytes, maxFrameBytes));
  }

  /** The session is over: the `ended` event (reason as this caller's audience sees it), then a normal close. */
  ended(endReason: EndReason): void {
    this.sendEvent(encode.ended(endReason));
    this.socket.end(RELAY_CLOSE.ended, 'ended');
  }

  private sendEvent(json: string): void {
    if (this.socket.send(json, false) === 'dropped') this.pump.stats.eventsDropped++;
  }
}
