import {
  residenceNow,
  type RelayResidence,
  type VoiceClock,
  type VoiceLinkState,
  type VoiceTranscriptDelta,
} from '../../providers/voice/index.js';
import type { EndReason } from '../end-reasons.js';
import type { GateDecision } from '../session/gate.js';
import type { RelayLink } from './link.js';
import { PendingAudio } from './pending-audio.js';
import {
  newStats,
  pumpAudioOf,
  RELAY_DEFAULTS,
  type PumpAudio,
  type RelayOptions,
  type RelayStats,
  type RelayTap,
} from './options.js';

/**
 * The media pump of one caller connection, shared by every transport that carries audio through Parley. It knows
 * no wire format: a transport decodes its caller's frames into {@link MediaPump.callerAudio} / `setMuted`, and
 * turns what the pump reports ({@link PumpEvents}) into its own events. It takes a {@link CallerLeg} (where audio
 * goes, how much waits there), a {@link RelayLink} (the voice session) and a clock, so it is unit-tested with fakes
 * and benchmarked with real sockets.
 *
 * Caller -> provider: audio goes to `link.sendAudio` synchronously (the provider link keeps its own bounded queue,
 * dropping its oldest frames when the provider is slow). Nothing is buffered here. Frames over `maxFrameBytes` or
 * not whole samples of the call's format are refused (counted, the transport told).
 *
 * Provider -> caller: assistant audio is withheld while the playback gate is closed. While the caller's leg has less
 * than `socketHighWaterBytes` waiting, audio is sent at once; beyond it, audio waits in a small ring (`pendingBytes`)
 * whose oldest samples are overwritten when it is full: a slow caller loses stale audio (counted, and told once the
 * backlog clears) instead of growing memory without bound.
 *
 * The hot path allocates nothing; the audio is passed through in the call's own format (never resampled).
 *
 * Residence (when the link measures it): a caller frame is stamped as it is read here and the provider side times it
 * to its socket; assistant audio sent at once is timed from the provider wire's read stamp to the caller socket's
 * send (src/providers/voice/residence.ts says what is left out).
 */
export type PumpPhase = 'open' | 'replaced' | 'ended' | 'closed';

/** Where assistant audio goes: the transport's caller leg. */
export interface CallerLeg {
  /** Send assistant audio; `dropped` when the leg refused it (over its own limit). Must not keep `audio`. */
  sendAudio(audio: Uint8Array): 'sent' | 'backpressure' | 'dropped';
  /** Bytes waiting to reach the caller (backpressure). */
  bufferedAmount(): number;
}

/** What the pump tells its transport, which says it to the caller in its own words (or not at all). */
export interface PumpEvents {
  /** The link, gate or mute changed (and once at start). */
  stateChanged(view: PumpStateView): void;
  transcript(role: 'user' | 'assistant', delta: VoiceTranscriptDelta): void;
  /** Assistant audio the caller missed because it read too slowly, told once its backlog cleared. */
  audioDropped(droppedBytes: number, droppedMs: number): void;
  /** A caller frame refused (at most once a second). */
  frameRefused(why: 'too_large' | 'not_whole_samples', bytes: number, maxFrameBytes: number): void;
  /** The session is over (reason as this caller's audience sees it): say so and close. */
  ended(endReason: EndReason): void;
}

export interface PumpStateView {
  link: VoiceLinkState;
  gateOpen: boolean;
  gateSeq: number;
  muted: boolean;
}

export class MediaPump {
  readonly stats: RelayStats = newStats();
  readonly options: RelayOptions;
  private readonly audio: PumpAudio;
  private readonly pending: PendingAudio;
  /** The call's turn clock: per frame, two numbers into a preallocated ring (no allocation). */
  private readonly turns: RelayLink['turns'];
  private phase: PumpPhase = 'open';
  private unsubscribe: (() => void) | undefined;
  private muted = false;
  /** The gate as of the latest decision (onGate): read per assistant chunk, so a field rather than a walk. */
  private gateOpen: boolean;
  private lastGate: boolean;
  private lastLink: VoiceLinkState;
  private lastSeq: number;
  /** Dropped assistant bytes the caller has not been told about yet. */
  private untoldDroppedBytes = 0;
  private refusalNoticeAt = -Infinity;
  private toggleWindowStart = -Infinity;
  private togglesInWindow = 0;
  private readonly residence: RelayResidence | undefined;

  constructor(
    private readonly leg: CallerLeg,
    readonly link: RelayLink,
    private readonly events: PumpEvents,
    private readonly clock: Pick<VoiceClock, 'now'>,
    options: Partial<RelayOptions> = {},
    private readonly tap?: RelayTap,
  ) {
    this.audio = pumpAudioOf(link.audio);
    this.options = { ...RELAY_DEFAULTS, ...this.audio.defaults, ...options };
    this.pending = new PendingAudio(this.options.pendingBytes, this.audio.sampleBytes);
    this.gateOpen = link.gateOpen;
    this.lastGate = this.gateOpen;
    this.lastLink = link.linkState;
    this.lastSeq = link.gateSeq;
    this.residence = link.residence;
    this.turns = link.turns;
    this.onOutputAudio = this.onOutputAudio.bind(this);
  }

  get state(): PumpPhase {
    return this.phase;
  }

  /** Bytes of assistant audio waiting in the ring. */
  get pendingBytes(): number {
    return this.pending.bytes;
  }

  /** Start pumping: subscribe to the session, tell it the caller is here (presence), send the first state. */
  start(): void {
    this.unsubscribe = this.link.subscribe({
      onOutputAudio: this.onOutputAudio,
      onInputTranscript: (d) => this.transcript('user', d),
      onOutputTranscript: (d) => {
        if (!this.gateOpen) {
          this.stats.transcriptsWithheld++;
          return;
        }
        this.transcript('assistant', d);
      },
      onLinkState: () => this.sendStateIfChanged(),
      onGate: (decision) => this.onGate(decision),
      onEnded: (reason) => this.onEnded(reason),
    });
    this.link.attached();
    this.gateOpen = this.link.gateOpen;
    this.sendState();
  }

  // ---- caller -> provider (hot path) ----------------------------------------------------------------------

  /** Caller audio in the call's format. `audio` is valid only during this call: it is consumed synchronously. */
  callerAudio(audio: Buffer): void {
    const readAt = this.residence === undefined ? Number.NaN : residenceNow();
    if (this.phase !== 'open') return;
    const length = audio.length;
    if (length === 0) return;
    if (length > this.options.maxFrameBytes) return this.refuse('too_large', length);
    if (length % this.audio.sampleBytes !== 0) return this.refuse('not_whole_samples', length);
    this.stats.callerFrames++;
    this.stats.callerBytes += length;
    this.tap?.caller(audio);
    if (!this.link.sendAudio(audio, readAt)) this.stats.callerFramesRefusedByLink++;
    else this.turns?.callerAudio(length);
  }

  /** A caller frame the transport could not read (too long, not its protocol): dropped and counted. */
  callerFrameDropped(): void {
    this.stats.callerTextDropped++;
  }

  private refuse(why: 'too_large' | 'not_whole_samples', bytes: number): void {
    this.stats.callerFramesRefused++;
    // At most one notice a second: a client stuck sending bad frames must not make us flood it back.
    const now = this.clock.now();
    if (now - this.refusalNoticeAt < 1000) return;
    this.refusalNoticeAt = now;
    this.events.frameRefused(why, bytes, this.options.maxFrameBytes);
  }

  /** The caller asked to mute or unmute (at most `maxMuteTogglesPerSecond` reach the provider). */
  setMuted(mute: boolean): void {
    if (this.phase !== 'open' || mute === this.muted) return;
    const now = this.clock.now();
    if (now - this.toggleWindowStart >= 1000) {
      this.toggleWindowStart = now;
      this.togglesInWindow = 0;
    }
    if (++this.togglesInWindow > this.options.maxMuteTogglesPerSecond) {
      this.stats.callerTextDropped++;
      return;
    }
    this.muted = mute;
    if (mute) {
      this.stats.mutes++;
      this.link.mute();
    } else {
      this.stats.unmutes++;
      this.link.unmute();
    }
    this.sendState();
  }

  // ---- provider -> caller (hot path) ----------------------------------------------------------------------

  private onOutputAudio(chunk: Buffer): void {
    if (this.phase !== 'open') return;
    const stats = this.stats;
    stats.assistantChunks++;
    stats.assistantBytes += chunk.length;
    if (!this.gateOpen) {
      stats.assistantWithheldChunks++;
      stats.assistantWithheldBytes += chunk.length;
      return;
    }
    // Only whole samples can be played: a trailing partial sample is cut.
    const partial = chunk.length % this.audio.sampleBytes;
    const audio = partial === 0 ? chunk : chunk.subarray(0, chunk.length - partial);
    if (audio.length === 0) return;
    this.tap?.assistant(audio);
    const buffered = this.leg.bufferedAmount();
    if (buffered > stats.maxSocketBuffered) stats.maxSocketBuffered = buffered;
    if (this.pending.isEmpty && buffered <= this.options.socketHighWaterBytes) {
      this.sendAudio(audio);
      const residence = this.residence;
      if (residence !== undefined) {
        // The wire's stamp of the message this chunk came in (consumed: a chunk from anywhere else is not timed).
        const readAt = residence.inboundReadAt;
        residence.inboundReadAt = Number.NaN;
        if (readAt === readAt) residence.providerToCaller.observeMs(residenceNow() - readAt);
      }
      return;
    }
    const droppedBefore = this.pending.droppedBytes;
    this.pending.push(audio);
    const dropped = this.pending.droppedBytes - droppedBefore;
    if (dropped > 0) this.countDropped(dropped);
    if (this.pending.bytes > stats.maxPending) stats.maxPending = this.pending.bytes;
    this.flush();
  }

  private sendAudio(audio: Uint8Array): void {
    if (this.leg.sendAudio(audio) === 'dropped') this.countDropped(audio.length);
    else {
      this.stats.assistantSentBytes += audio.length;
      this.turns?.assistantAudioWritten();
    }
  }

  private countDropped(bytes: number): void {
    this.stats.assistantDroppedBytes += bytes;
    this.untoldDroppedBytes += bytes;
  }

  /** The caller's leg drained some of its backlog: send what waits, then tell the caller what it missed. */
  onDrain(): void {
    if (this.phase !== 'open') return;
    this.flush();
  }

  private flush(): void {
    const high = this.options.socketHighWaterBytes;
    const chunkMax = this.options.flushChunkBytes;
    while (!this.pending.isEmpty) {
      const buffered = this.leg.bufferedAmount();
      if (buffered > this.stats.maxSocketBuffered) this.stats.maxSocketBuffered = buffered;
      if (buffered > high) return;
      const chunk = this.pending.peek(chunkMax)!;
      const length = chunk.length;
      this.sendAudio(chunk);
      this.pending.consume(length);
    }
    if (this.untoldDroppedBytes > 0 && this.leg.bufferedAmount() <= high) {
      const bytes = this.untoldDroppedBytes;
      this.untoldDroppedBytes = 0;
      this.events.audioDropped(bytes, Math.round(bytes / this.audio.bytesPerMs));
    }
  }

  // ---- events -----------------------------------------------------------------------------------------------

  private transcript(role: 'user' | 'assistant', d: VoiceTranscriptDelta): void {
    if (this.phase !== 'open') return;
    this.events.transcript(role, d);
  }

  private onGate(decision: Readonly<GateDecision>): void {
    this.gateOpen = decision.state === 'open';
    // Closing the gate also silences what a slow caller still had waiting.
    if (decision.state === 'closed' && !this.pending.isEmpty) this.pending.clear();
    this.sendStateIfChanged();
  }

  private sendStateIfChanged(): void {
    if (this.gateOpen === this.lastGate && this.link.linkState === this.lastLink && this.link.gateSeq === this.lastSeq)
      return;
    this.sendState();
  }

  private sendState(): void {
    if (this.phase !== 'open') return;
    this.lastGate = this.gateOpen;
    this.lastLink = this.link.linkState;
    this.lastSeq = this.link.gateSeq;
    this.events.stateChanged({
      link: this.lastLink,
      gateOpen: this.lastGate,
      gateSeq: this.lastSeq,
      muted: this.muted,
    });
  }

  // ---- endings ------------------------------------------------------------------------------------------------

  /** The session is over: the transport says so (reason as this caller's audience sees it) and closes. */
  private onEnded(endReason: EndReason): void {
    if (this.phase !== 'open') return;
    this.unsubscribe = undefined; // the session dropped its listeners itself
    this.pending.clear();
    this.phase = 'ended';
    this.events.ended(endReason);
  }

  /** A newer connection for the same session took over: leave without telling the session the caller is gone. */
  replace(): boolean {
    if (this.phase !== 'open') return false;
    this.detach();
    this.phase = 'replaced';
    return true;
  }

  /** The caller's connection closed (any reason). Only an open pump counts as the caller going away (presence). */
  onClose(): void {
    const wasOpen = this.phase === 'open';
    this.detach();
    this.phase = 'closed';
    if (wasOpen) this.link.detached();
  }

  private detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.pending.clear();
  }
}
