import type { VoiceClock } from './clock.js';
import { encodeAudioAppendFrame } from './protocol.js';
import { residenceNow, type RelayResidence } from './residence.js';
import { SharedTicker } from './shared-ticker.js';

/** PCM16LE mono 24 kHz: the window's size when a session names no other format. */
const BYTES_PER_MS = 48;
/** Frames of one window whose times are kept apart (more, smaller frames share the newest slot's times). */
const STAMPED_FRAMES = 32;

/**
 * Caller audio gathered into one `session.input_audio.append` per window (VOICE_PROVIDER_APPEND_MS), instead of one
 * per caller frame: with 20 ms caller frames and a 100 ms window, five frames become one provider frame, so the
 * provider leg does a fifth of the WebSocket writes, maskings, base64 encodes and JSON framings (native-bench
 * RESULTS.md: the provider socket's write path was the largest single cost of the relay).
 *
 * The bytes staged are copied into one buffer per session (a window of PCM, allocated once); a full window leaves at
 * once, so with steady caller frames the latency added to a frame is at most the window minus one frame (its mean:
 * half of that). A partial window (the caller went quiet, muted or ended) leaves when the instance's one shared
 * {@link AppendFlusher} sees it is older than the window: at most two windows late, and no timer per session.
 */
export class AppendCoalescer {
  private readonly staging: Buffer;
  private length = 0;
  /** Clock time of the oldest staged byte (meaningful while something is staged). */
  stagedAt = 0;
  /**
   * Residence of the staged frames, when measured: per frame (readAt, stagedAt) in monotonic ms, and how many frames
   * share each slot (the last one takes every frame past {@link STAMPED_FRAMES}). Allocated once per session.
   */
  private readonly stamps: Float64Array | undefined;
  private readonly shares: Uint32Array | undefined;
  private frames = 0;

  constructor(
    private readonly flusher: AppendFlusher,
    /** Receives each encoded append frame, in order. */
    private readonly emit: (frame: Buffer) => void,
    /** One window of this session's audio format ({@link AppendFlusher.windowBytesOf}). */
    windowBytes = flusher.windowBytes,
    /** Where the frames' residence is recorded (window wait apart from working time); undefined: not measured. */
    private readonly residence: RelayResidence | undefined = flusher.residence,
  ) {
    this.staging = Buffer.allocUnsafeSlow(windowBytes);
    if (residence !== undefined) {
      this.stamps = new Float64Array(2 * STAMPED_FRAMES);
      this.shares = new Uint32Array(STAMPED_FRAMES);
    }
  }

  /** Bytes waiting for the window to fill. */
  get staged(): number {
    return this.length;
  }

  /**
   * Stage caller PCM (copied: the caller's buffer is only valid during the call); full windows leave at once.
   * `readAt`: when the frame was read from the caller (residence clock), if measured. A frame belongs to the window
   * its last byte lands in: that window's departure is when the provider has all of it.
   */
  push(pcm: Buffer, readAt = Number.NaN): void {
    const windowBytes = this.staging.length;
    const stamped = this.stamps !== undefined && readAt === readAt;
    const stagedAt = stamped ? residenceNow() : 0;
    let offset = 0;
    while (offset < pcm.length) {
      if (this.length === 0) {
        this.stagedAt = this.flusher.now();
        this.flusher.watch(this);
      }
      const n = Math.min(pcm.length - offset, windowBytes - this.length);
      pcm.copy(this.staging, this.length, offset, offset + n);
      this.length += n;
      offset += n;
      if (stamped && offset === pcm.length) this.stamp(readAt, stagedAt);
      if (this.length === windowBytes) this.flush();
    }
  }

  private stamp(readAt: number, stagedAt: number): void {
    const stamps = this.stamps!;
    const shares = this.shares!;
    const slot = this.frames < STAMPED_FRAMES ? this.frames++ : STAMPED_FRAMES - 1;
    if (slot === STAMPED_FRAMES - 1 && shares[slot]! > 0) {
      // Past the kept slots: the newest frame's times stand for every frame sharing the last slot.
      shares[slot]!++;
    } else shares[slot] = 1;
    stamps[2 * slot] = readAt;
    stamps[2 * slot + 1] = stagedAt;
  }

  /** Send what is staged now (before a control frame, so the provider hears the audio first; at a window's age). */
  flush(): void {
    if (this.length === 0) return;
    const leavingAt = this.frames > 0 ? residenceNow() : 0;
    const frame = encodeAudioAppendFrame(this.staging.subarray(0, this.length));
    this.length = 0;
    this.flusher.unwatch(this);
    this.emit(frame);
    if (this.frames > 0) this.record(leavingAt);
  }

  /**
   * Each staged frame's residence: working = (staged - read) + (handed to the socket - window left), the wait on
   * purpose = window left - staged.
   */
  private record(leavingAt: number): void {
    const sentAt = residenceNow();
    const stamps = this.stamps!;
    const shares = this.shares!;
    const residence = this.residence!;
    const sending = sentAt - leavingAt;
    for (let i = 0; i < this.frames; i++) {
      const readAt = stamps[2 * i]!;
      const stagedAt = stamps[2 * i + 1]!;
      const times = shares[i]!;
      residence.callerToProvider.observeMs(stagedAt - readAt + sending, times);
      residence.appendWindow.observeMs(leavingAt - stagedAt, times);
      shares[i] = 0;
    }
    this.frames = 0;
  }

  /** Forget what is staged (the link dropped: by the time a new one exists the audio is stale; the session ended). */
  discard(): void {
    this.length = 0;
    this.frames = 0;
    this.shares?.fill(0);
    this.flusher.unwatch(this);
  }
}

/**
 * The one timer of an adapter instance for partial windows (a {@link SharedTicker}): armed only while some session
 * has audio staged, it flushes every window older than `windowMs`. Thousands of sessions, one timeout.
 */
export class AppendFlusher {
  readonly windowBytes: number;
  private readonly ticker: SharedTicker<AppendCoalescer>;

  constructor(
    private readonly clock: VoiceClock,
    readonly windowMs: number,
    /** The adapter instance's residence figures, recorded into by every session's coalescer. */
    readonly residence?: RelayResidence,
  ) {
    if (!(windowMs > 0)) throw new RangeError('the append window must be positive');
    // Whole samples only: a window never splits a PCM16 sample.
    this.windowBytes = Math.max(2, Math.round(windowMs * BYTES_PER_MS) & ~1);
    this.ticker = new SharedTicker<AppendCoalescer>(clock, windowMs, (coalescer, now) => {
      if (coalescer.stagedAt <= now - windowMs) coalescer.flush();
    });
  }

  now(): number {
    return this.clock.now();
  }

  /** The window in bytes for audio of `bytesPerMs`, cut at whole samples of `sampleBytes`. */
  windowBytesOf(bytesPerMs: number, sampleBytes: number): number {
    const bytes = Math.round(this.windowMs * bytesPerMs);
    return Math.max(sampleBytes, bytes - (bytes % sampleBytes));
  }

  /** Sessions with audio staged (tests and metrics). */
  get size(): number {
    return this.ticker.size;
  }

  watch(coalescer: AppendCoalescer): void {
    this.ticker.add(coalescer);
  }

  unwatch(coalescer: AppendCoalescer): void {
    this.ticker.delete(coalescer);
  }
}
