import type { RealtimeSocket } from '../../../http/index.js';
import type { VoiceClock } from '../../../providers/voice/index.js';
import { presentEndReason, type EndReason } from '../../end-reasons.js';
import type { RelayLink } from '../../pump/link.js';
import { MediaPump, type CallerLeg, type PumpEvents, type PumpStateView } from '../../pump/media-pump.js';
import type { RelayOptions, RelayStats, RelayTap } from '../../pump/options.js';
import type { LiveVoiceSession } from '../../session/live-session.js';
import { encodeOut, readCarrierMessage } from './codec.js';

/** What happened on a phone stream, for whoever keeps the call's timeline (one callback per transport). */
export type PhoneStreamEvent =
  | { type: 'start'; callSid: string }
  | { type: 'dtmf'; digit: string }
  | { type: 'clear'; unplayedMs: number }
  | { type: 'mark'; name: string; heardMs: number }
  | { type: 'stop' };

export type PhoneEventSink = (sessionId: string, event: PhoneStreamEvent) => void;

/** Counters a phone stream adds to the pump's. */
export interface PhoneStats {
  clears: number;
  marksSent: number;
  marksPlayed: number;
  /** Assistant audio the carrier said it played (its marks came back), in bytes of μ-law (8 per ms). */
  heardBytes: number;
}

const MAX_CARRIER_MESSAGE_BYTES = 64 * 1024;
/** The longest an end waits for the caller to hear what was already sent (then it hangs up anyway). */
const MAX_PLAYOUT_WAIT_MS = 10_000;
/**
 * A `mark` follows at most this much assistant audio (μ-law: 8 bytes a millisecond), or the last chunk of a burst
 * once this long has passed: what the caller heard is known to 100 ms, with a fifth of the marks a mark per 20 ms
 * chunk would cost (each is a frame out and a frame back).
 */
const MARK_EVERY_MS = 100;
const MARK_EVERY_BYTES = MARK_EVERY_MS * 8;

/**
 * One carrier media stream: the shared {@link MediaPump} with the Media Streams protocol in front of it. The stream
 * is not a caller until `start` brings the call's control token (the carrier cannot put it in the URL); then μ-law
 * frames go to the provider as they are (the call's format is `pcmu` 8 kHz: no transcoding). Assistant audio leaves
 * as `media`, followed by a `mark` every 100 ms of it: a mark coming back means the caller heard the audio before it,
 * so the relay knows what was played. When the gate closes (the caller talks over the assistant) a `clear` leaves at
 * once and the carrier drops what it had queued. The end waits (bounded) until the last words were played, then
 * closes.
 */
export class PhoneRelay implements CallerLeg, PumpEvents {
  readonly phone: PhoneStats = { clears: 0, marksSent: 0, marksPlayed: 0, heardBytes: 0 };
  private readonly pump: MediaPump;
  private streamSid = '';
  private started = false;
  private closing = false;
  private socketEnded = false;
  private markSeq = 0;
  /** When a `mark` was last put on the timeline (ms, performance.now). */
  private markRecordedAt = -Infinity;
  /** Marks sent and not yet played, oldest first, with the bytes each one closes. */
  private readonly unplayed: { name: string; bytes: number }[] = [];
  /** Audio sent and not yet played, marked or not. */
  private unplayedBytes = 0;
  /** Audio sent since the last mark. */
  private unmarkedBytes = 0;
  private markTimer: NodeJS.Timeout | undefined;
  private playoutTimer: NodeJS.Timeout | undefined;
  private endReason: EndReason = null;

  constructor(
    readonly socket: RealtimeSocket<unknown>,
    readonly session: LiveVoiceSession,
    readonly link: RelayLink,
    clock: Pick<VoiceClock, 'now'>,
    private readonly checkToken: (token: string) => boolean,
    private readonly onEvent: PhoneEventSink | undefined,
    options: Partial<RelayOptions> = {},
    tap?: RelayTap,
  ) {
    this.pump = new MediaPump(this, link, this, clock, options, tap);
    this.unwatch = session.subscribe({
      onEnded: (reason) => {
        if (!this.started) this.endSocket(1000, presentEndReason(reason, 'visitor') ?? 'ended');
      },
    });
  }

  /** Until `start`, the pump does not listen: a call that ends before it hangs up the stream from here. */
  private unwatch: (() => void) | undefined;

  get stats(): RelayStats {
    return this.pump.stats;
  }

  get pendingBytes(): number {
    return this.pump.pendingBytes;
  }

  /** A carrier message (`data` is valid only during this call). */
  onMessage(data: ArrayBuffer, binary: boolean): void {
    const message = binary ? undefined : readCarrierMessage(data, MAX_CARRIER_MESSAGE_BYTES);
    if (message === undefined) {
      this.pump.callerFrameDropped();
      return;
    }
    switch (message.event) {
      case 'connected':
        return;
      case 'start':
        if (this.started) return;
        if (message.token === undefined || !this.checkToken(message.token)) {
          this.endSocket(1008, 'not this call');
          return;
        }
        if (this.session.status !== 'active') {
          this.endSocket(1000, presentEndReason(this.session.endReason, 'visitor') ?? 'ended');
          return;
        }
        this.started = true;
        this.unwatch?.();
        this.streamSid = message.streamSid;
        this.emit({ type: 'start', callSid: message.callSid });
        this.pump.start();
        return;
      case 'media':
        if (this.started) this.pump.callerAudio(Buffer.from(message.payload, 'base64'));
        return;
      case 'mark':
        this.played(message.name);
        return;
      case 'dtmf':
        if (this.started && this.pump.state === 'open') this.keypad(message.digit);
        return;
      case 'stop':
        this.emit({ type: 'stop' });
        // The caller hung up: the call ends now, ended by the caller (no grace period: a carrier never reconnects a
        // stream). Only a line that drops without a `stop` is `disconnected`.
        // After the assistant's transfer_call the carrier's stop is the hand-over, not a hang-up.
        if (this.started && this.pump.state === 'open')
          void (this.session.handedOff ? this.session.end('transferred') : this.session.end(null, 'client'));
        this.endSocket(1000, 'stopped');
        return;
    }
  }

  onDrain(): void {
    this.pump.onDrain();
  }

  /** The socket closed: the caller is gone (a dropped line ends the call at once, as a `stop` does). */
  onClose(): void {
    this.socketEnded = true;
    this.unwatch?.();
    if (this.playoutTimer !== undefined) clearTimeout(this.playoutTimer);
    if (this.markTimer !== undefined) clearTimeout(this.markTimer);
    const wasOpen = this.started && this.pump.state === 'open';
    this.pump.onClose();
    if (wasOpen) void this.session.end(this.session.handedOff ? 'transferred' : 'disconnected');
  }

  /** Digits are part of what the caller said: written to the transcript and told to the assistant as text. */
  private keypad(digit: string): void {
    this.emit({ type: 'dtmf', digit });
    this.session.transcripts.add('user', `[keypad ${digit}]`);
    this.session.provider.appendInstructions(`The caller pressed ${digit} on the phone keypad.`);
  }

  private played(name: string): void {
    const at = this.unplayed.findIndex((m) => m.name === name);
    if (at < 0) return; // a mark of audio already cleared
    for (const m of this.unplayed.splice(0, at + 1)) {
      this.unplayedBytes -= m.bytes;
      this.phone.heardBytes += m.bytes;
      this.phone.marksPlayed++;
    }
    this.emit({ type: 'mark', name, heardMs: Math.round(this.phone.heardBytes / 8) });
    if (this.closing && this.unplayed.length === 0) this.close();
  }

  /**
   * To the sink, and onto the call's timeline: keypad presses (not the digit: it is in the transcript), clears with
   * what they dropped, the carrier's stop with all it played, and a `mark` when the carrier has played everything sent
   * so far, at most one a second (the timeline records nothing per audio chunk).
   */
  private emit(event: PhoneStreamEvent): void {
    this.onEvent?.(this.session.id, event);
    const timeline = this.session.timeline;
    if (event.type === 'dtmf') timeline.record('dtmf');
    else if (event.type === 'clear') timeline.record('clear', { unplayedMs: event.unplayedMs });
    else if (event.type === 'stop') timeline.record('stop', { heardMs: Math.round(this.phone.heardBytes / 8) });
    else if (event.type === 'mark' && this.unplayedBytes === 0 && performance.now() - this.markRecordedAt >= 1000) {
      this.markRecordedAt = performance.now();
      timeline.record('mark', { heardMs: event.heardMs });
    }
  }

  // ---- the caller leg --------------------------------------------------------------------------------------------

  sendAudio(audio: Uint8Array): 'sent' | 'backpressure' | 'dropped' {
    // The chunk and a mark due leave in one write (corked): assistant audio arrives from the provider's socket,
    // outside any uWS callback, where each uncorked send is a system call of its own.
    let sent: 'sent' | 'backpressure' | 'dropped' = 'dropped';
    this.socket.cork(() => {
      sent = this.socket.send(encodeOut.media(this.streamSid, audio), false);
      if (sent === 'dropped') return;
      this.unplayedBytes += audio.length;
      this.unmarkedBytes += audio.length;
      if (this.unmarkedBytes >= MARK_EVERY_BYTES) this.sendMark();
      else this.markTimer ??= setTimeout(this.markLater, MARK_EVERY_MS);
    });
    return sent;
  }

  private readonly markLater = (): void => {
    this.markTimer = undefined;
    if (this.unmarkedBytes > 0 && !this.socketEnded) this.socket.cork(() => this.sendMark());
  };

  /** A mark after the audio sent since the last one. */
  private sendMark(): void {
    if (this.markTimer !== undefined) clearTimeout(this.markTimer);
    this.markTimer = undefined;
    const name = `a${++this.markSeq}`;
    this.socket.send(encodeOut.mark(this.streamSid, name), false);
    this.unplayed.push({ name, bytes: this.unmarkedBytes });
    this.unmarkedBytes = 0;
    this.phone.marksSent++;
  }

  bufferedAmount(): number {
    return this.socket.bufferedAmount();
  }

  // ---- the pump's events ----------------------------------------------------------------------------------------

  stateChanged(view: PumpStateView): void {
    // Barge-in: the gate closed (the caller talks over the assistant): what the carrier still queues is dropped now.
    if (!view.gateOpen && this.unplayedBytes > 0) this.clear();
  }

  private clear(): void {
    const unplayedMs = Math.round(this.unplayedBytes / 8);
    this.socket.send(encodeOut.clear(this.streamSid), false);
    this.unplayed.length = 0;
    this.unplayedBytes = 0;
    this.unmarkedBytes = 0;
    if (this.markTimer !== undefined) clearTimeout(this.markTimer);
    this.markTimer = undefined;
    this.phone.clears++;
    this.emit({ type: 'clear', unplayedMs });
  }

  transcript(): void {
    // A phone has no captions: the transcript is kept with the conversation.
  }

  audioDropped(): void {
    // Counted by the pump; a carrier has nowhere to show it.
  }

  frameRefused(): void {
    // Counted by the pump.
  }

  /** The call is over: hang up once the caller heard what was sent (bounded), the reason in the close frame. */
  ended(endReason: EndReason): void {
    this.endReason = endReason;
    this.closing = true;
    // The last words get their mark now, so the end waits until they were heard.
    if (this.unmarkedBytes > 0 && !this.socketEnded) this.socket.cork(() => this.sendMark());
    if (this.unplayed.length === 0) {
      this.close();
      return;
    }
    const waitMs = Math.min(MAX_PLAYOUT_WAIT_MS, Math.round(this.unplayedBytes / 8) + 1000);
    this.playoutTimer = setTimeout(() => this.close(), waitMs);
    this.playoutTimer.unref();
  }

  private close(): void {
    if (this.playoutTimer !== undefined) clearTimeout(this.playoutTimer);
    this.playoutTimer = undefined;
    // The carrier never shows it to the caller; still, the visitor's words (no usage reasons) for a caller's line.
    this.endSocket(1000, presentEndReason(this.endReason, 'visitor') ?? 'ended');
  }

  private endSocket(code: number, reason: string): void {
    if (this.socketEnded) return;
    this.socketEnded = true;
    this.socket.end(code, reason);
  }
}
