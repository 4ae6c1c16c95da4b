import type { RealtimeSocket } from '../../http/index.js';
import type { VoiceClock, VoiceLinkState, VoiceTranscriptDelta } from '../../providers/voice/index.js';
import type { EndReason } from '../end-reasons.js';
import type { GateDecision } from '../session/gate.js';
import type { RelayLink } from './link.js';
import { PendingAudio } from './pending-audio.js';
import { newStats, RELAY_DEFAULTS, type RelayOptions, type RelayStats, type RelayTap } from './options.js';

/**
 * The media relay of one caller socket (VOICE.md "Performance shape"; ARCHITECTURE rule 8). Transport-free: it
 * takes a {@link RealtimeSocket}, a {@link RelayLink} (the voice session) and a clock, so it is unit-tested with
 * fakes and benchmarked with real sockets.
 *
 * Caller -> provider: binary frames of PCM16LE 24 kHz mono go to `link.sendAudio` synchronously (the provider link
 * keeps its own bounded queue, dropping its oldest frames when the provider is slow). Nothing is buffered here.
 * Frames over `maxFrameBytes` or not whole samples are refused (counted, the caller told). Text frames other than
 * `{"type":"mute"}` / `{"type":"unmute"}` are dropped and counted; nothing the caller sends reaches the provider as
 * a control event.
 *
 * Provider -> caller: assistant audio is withheld while the playback gate is closed. While the caller's socket has
 * less than `socketHighWaterBytes` waiting, audio is sent at once; beyond it, audio waits in a small ring
 * (`pendingBytes`) whose oldest samples are overwritten when it is full: a slow caller loses stale audio (counted,
 * and told once the backlog clears) instead of growing memory without bound.
 *
 * The hot path allocates nothing beyond a Buffer view of the caller frame (the provider link base64-encodes it).
 */
export type RelayPhase = 'open' | 'replaced' | 'ended' | 'closed';

/** Close codes the relay uses besides 1000 (ended). */
export const RELAY_CLOSE = { ended: 1000, replaced: 4001 } as const;

const BYTES_PER_MS = 48;
const MUTE_FRAME_TYPES = new Set(['mute', 'unmute']);

export class MediaRelay {
  readonly stats: RelayStats = newStats();
  private readonly options: RelayOptions;
  private readonly pending: PendingAudio;
  private phase: RelayPhase = 'open';
  private unsubscribe: (() => void) | undefined;
  private muted = false;
  /**
   * The gate as of the latest decision this relay was told of (onGate): read per assistant chunk, so it is a field
   * here rather than a walk through the link to the session's gate for every chunk.
   */
  private gateOpen: boolean;
  private lastGate: boolean;
  private lastLink: VoiceLinkState;
  private lastSeq: number;
  /** Dropped assistant bytes the caller has not been told about yet. */
  private untoldDroppedBytes = 0;
  private refusalNoticeAt = -Infinity;
  private toggleWindowStart = -Infinity;
  private togglesInWindow = 0;

  constructor(
    readonly socket: RealtimeSocket<unknown>,
    readonly link: RelayLink,
    private readonly clock: Pick<VoiceClock, 'now'>,
    options: Partial<RelayOptions> = {},
    private readonly tap?: RelayTap,
  ) {
    this.options = { ...RELAY_DEFAULTS, ...options };
    this.pending = new PendingAudio(this.options.pendingBytes);
    this.gateOpen = link.gateOpen;
    this.lastGate = this.gateOpen;
    this.lastLink = link.linkState;
    this.lastSeq = link.gateSeq;
    this.onOutputAudio = this.onOutputAudio.bind(this);
  }

  get state(): RelayPhase {
    return this.phase;
  }

  /** Bytes of assistant audio waiting in the ring. */
  get pendingBytes(): number {
    return this.pending.bytes;
  }

  /** Start relaying: subscribe to the session, tell it the caller is here, send the first state. */
  start(): void {
    this.unsubscribe = this.link.subscribe({
      onOutputAudio: this.onOutputAudio,
      onInputTranscript: (d) => this.sendTranscript('user', d),
      onOutputTranscript: (d) => {
        if (!this.gateOpen) {
          this.stats.transcriptsWithheld++;
          return;
        }
        this.sendTranscript('assistant', d);
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

  /** A caller message. `data` is valid only during this call (uWS): it is consumed synchronously. */
  onMessage(data: ArrayBuffer, binary: boolean): void {
    if (this.phase !== 'open') return;
    if (!binary) return this.onText(data);
    const length = data.byteLength;
    if (length === 0) return;
    if (length > this.options.maxFrameBytes) return this.refuse('too_large', length);
    if ((length & 1) !== 0) return this.refuse('not_whole_samples', length);
    this.stats.callerFrames++;
    this.stats.callerBytes += length;
    const pcm = Buffer.from(data, 0, length);
    this.tap?.caller(pcm);
    if (!this.link.sendAudio(pcm)) this.stats.callerFramesRefusedByLink++;
  }

  private refuse(why: 'too_large' | 'not_whole_samples', bytes: number): void {
    this.stats.callerFramesRefused++;
    // At most one notice a second: a client stuck sending bad frames must not make us flood it back.
    const now = this.clock.now();
    if (now - this.refusalNoticeAt < 1000) return;
    this.refusalNoticeAt = now;
    this.sendEvent(
      JSON.stringify({ type: 'state', notice: 'frame_refused', why, bytes, maxFrameBytes: this.options.maxFrameBytes }),
    );
  }

  private onText(data: ArrayBuffer): void {
    if (data.byteLength > this.options.maxTextFrameBytes) {
      this.stats.callerTextDropped++;
      return;
    }
    let type: unknown;
    try {
      const value = JSON.parse(Buffer.from(data).toString('utf8')) as unknown;
      type =
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? (value as { type?: unknown }).type
          : undefined;
    } catch {
      type = undefined;
    }
    if (typeof type !== 'string' || !MUTE_FRAME_TYPES.has(type)) {
      this.stats.callerTextDropped++;
      return;
    }
    const mute = type === 'mute';
    if (mute === this.muted) return;
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

  private onOutputAudio(pcm: Buffer): void {
    if (this.phase !== 'open') return;
    const stats = this.stats;
    stats.assistantChunks++;
    stats.assistantBytes += pcm.length;
    if (!this.gateOpen) {
      stats.assistantWithheldChunks++;
      stats.assistantWithheldBytes += pcm.length;
      return;
    }
    // PCM16 is two bytes a sample: an odd trailing byte cannot be played.
    const audio = (pcm.length & 1) === 0 ? pcm : pcm.subarray(0, pcm.length - 1);
    if (audio.length === 0) return;
    this.tap?.assistant(audio);
    const buffered = this.socket.bufferedAmount();
    if (buffered > stats.maxSocketBuffered) stats.maxSocketBuffered = buffered;
    if (this.pending.isEmpty && buffered <= this.options.socketHighWaterBytes) {
      this.sendAudio(audio);
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
    const result = this.socket.send(audio, true);
    if (result === 'dropped') this.countDropped(audio.length);
    else this.stats.assistantSentBytes += audio.length;
  }

  private countDropped(bytes: number): void {
    this.stats.assistantDroppedBytes += bytes;
    this.untoldDroppedBytes += bytes;
  }

  /** The caller's socket drained some of its backlog: send what waits, then tell the caller what it missed. */
  onDrain(): void {
    if (this.phase !== 'open') return;
    this.flush();
  }

  private flush(): void {
    const high = this.options.socketHighWaterBytes;
    const chunkMax = this.options.flushChunkBytes;
    while (!this.pending.isEmpty) {
      const buffered = this.socket.bufferedAmount();
      if (buffered > this.stats.maxSocketBuffered) this.stats.maxSocketBuffered = buffered;
      if (buffered > high) return;
      const chunk = this.pending.peek(chunkMax)!;
      const length = chunk.length;
      this.sendAudio(chunk);
      this.pending.consume(length);
    }
    if (this.untoldDroppedBytes > 0 && this.socket.bufferedAmount() <= high) {
      const bytes = this.untoldDroppedBytes;
      this.untoldDroppedBytes = 0;
      this.sendEvent(
        JSON.stringify({
          type: 'state',
          notice: 'audio_dropped',
          droppedBytes: bytes,
          droppedMs: Math.round(bytes / BYTES_PER_MS),
        }),
      );
    }
  }

  // ---- events -----------------------------------------------------------------------------------------------

  private sendTranscript(role: 'user' | 'assistant', d: VoiceTranscriptDelta): void {
    if (this.phase !== 'open') return;
    this.sendEvent(JSON.stringify({ type: 'transcript', role, text: d.text, startMs: d.startMs, endMs: d.endMs }));
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

  /**
   * `{"type":"state","link","gate","gateSeq","muted"}`: on open and whenever one of them changes. `gateSeq` is the
   * decision's seq on the gate stream, so a client listening to both knows which is newer; on this socket the state
   * is ordered with the audio (no assistant audio follows a closed state until an open one).
   */
  private sendState(): void {
    if (this.phase !== 'open') return;
    this.lastGate = this.gateOpen;
    this.lastLink = this.link.linkState;
    this.lastSeq = this.link.gateSeq;
    this.sendEvent(
      JSON.stringify({
        type: 'state',
        link: this.lastLink,
        gate: this.lastGate ? 'open' : 'closed',
        gateSeq: this.lastSeq,
        muted: this.muted,
      }),
    );
  }

  private sendEvent(json: string): void {
    if (this.socket.send(json, false) === 'dropped') this.stats.eventsDropped++;
  }

  // ---- endings ------------------------------------------------------------------------------------------------

  /** The session is over: the `ended` event (reason as this caller's audience sees it), then a normal close. */
  private onEnded(endReason: EndReason): void {
    if (this.phase !== 'open') return;
    this.unsubscribe = undefined; // the session dropped its listeners itself
    this.pending.clear();
    this.sendEvent(JSON.stringify({ type: 'ended', endReason }));
    this.phase = 'ended';
    this.socket.end(RELAY_CLOSE.ended, 'ended');
  }

  /** A newer media socket for the same session took over: leave without telling the session we are gone. */
  replace(): void {
    if (this.phase !== 'open') return;
    this.detach();
    this.phase = 'replaced';
    this.sendEvent(JSON.stringify({ type: 'state', notice: 'replaced' }));
    this.socket.end(RELAY_CLOSE.replaced, 'replaced by a newer connection');
  }

  /** The caller's socket closed (any reason). Only an open relay counts as the caller going away. */
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
