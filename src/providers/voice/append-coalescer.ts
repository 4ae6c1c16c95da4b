import type { VoiceClock } from './clock.js';
import { encodeAudioAppendFrame } from './protocol.js';
import { residenceNow, type RelayResidence } from './residence.js';
import { SharedTicker } from './shared-ticker.js';

/** PCM16LE mono 24 kHz: bytes of one millisecond when a session names no other format. */
const BYTES_PER_MS = 48;
/** The largest append staging builds: 100 ms of audio (a backlog of caller frames read at once leaves in these). */
const STAGING_MS = 100;
/** Frames of one staged append whose times are kept apart (more, smaller frames share the newest slot's times). */
const STAMPED_FRAMES = 32;

/** What the coalescer asks of the provider link (the session's outgoing queue). */
export interface AppendLink {
  /** Nothing in flight: no write waiting for its completion, nothing queued, no bytes buffered in the socket. */
  readonly idle: boolean;
}

/**
 * Caller audio to the provider as `session.input_audio.append` frames: **a frame goes at once when nothing is in
 * flight on the link**, and frames are gathered into one append only while the previous write has not drained (the
 * socket still buffers bytes, or frames wait in the adapter's queue). Staged audio leaves when the link reports a
 * drain ({@link drained}: the outgoing queue's watched write completed), before any control frame, when 100 ms are
 * staged, or when the oldest staged byte is `maxWaitMs` old (VOICE_PROVIDER_APPEND_MS), whichever comes first. So a
 * link that keeps up sends one append per caller frame and adds no wait; a link that falls behind (a busy instance,
 * a slow provider) writes fewer, larger frames, which is when fewer writes are worth a few ms.
 *
 * The staging buffer is allocated the first time something is staged (most calls never stage). The wait is measured:
 * every frame's time staged goes to the residence's `appendWindow` histogram (0 for a frame sent at once), apart from
 * its working time.
 */
export class AppendCoalescer {
  private staging: Buffer | undefined;
  private length = 0;
  /** Clock time of the oldest staged byte (meaningful while something is staged). */
  stagedAt = 0;
  /**
   * Residence of the staged frames, when measured: per frame (readAt, stagedAt) in monotonic ms, and how many frames
   * share each slot (the last one takes every frame past {@link STAMPED_FRAMES}). Allocated with the staging buffer.
   */
  private stamps: Float64Array | undefined;
  private shares: Uint32Array | undefined;
  private frames = 0;

  constructor(
    private readonly flusher: AppendFlusher,
    private readonly link: AppendLink,
    /** Receives each encoded append frame, in order. */
    private readonly emit: (frame: Buffer) => void,
    /** The largest staged append in this session's audio format ({@link AppendFlusher.stagingBytesOf}). */
    private readonly capacity = flusher.stagingBytes,
    /** Where the frames' residence is recorded (wait apart from working time); undefined: not measured. */
    private readonly residence: RelayResidence | undefined = flusher.residence,
  ) {}

  /** Bytes waiting for the link to drain. */
  get staged(): number {
    return this.length;
  }

  /**
   * One caller frame (not kept: copied when staged). `readAt`: when the frame was read from the caller (residence
   * clock), if measured.
   */
  push(pcm: Buffer, readAt = Number.NaN): void {
    if (this.length === 0 && this.link.idle) return this.sendNow(pcm, readAt);
    if (this.length + pcm.length > this.capacity) {
      this.flush();
      // Larger than a whole staged append: it is one append of its own, now (behind the one just written).
      if (pcm.length >= this.capacity) return this.sendNow(pcm, readAt);
    }
    this.stage(pcm, readAt);
  }

  private sendNow(pcm: Buffer, readAt: number): void {
    this.emit(encodeAudioAppendFrame(pcm));
    const residence = this.residence;
    if (residence !== undefined && readAt === readAt) {
      residence.callerToProvider.observeMs(residenceNow() - readAt);
      residence.appendWindow.observeZero();
    }
  }

  private stage(pcm: Buffer, readAt: number): void {
    if (this.staging === undefined) {
      this.staging = Buffer.allocUnsafeSlow(this.capacity);
      if (this.residence !== undefined) {
        this.stamps = new Float64Array(2 * STAMPED_FRAMES);
        this.shares = new Uint32Array(STAMPED_FRAMES);
      }
    }
    if (this.length === 0) {
      this.stagedAt = this.flusher.now();
      this.flusher.watch(this);
    }
    pcm.copy(this.staging, this.length);
    this.length += pcm.length;
    if (this.stamps !== undefined && readAt === readAt) this.stamp(readAt, residenceNow());
    if (this.length === this.capacity) this.flush();
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

  /** The link drained (its last write completed, nothing queued): what is staged leaves now. */
  drained(): void {
    if (this.length > 0) this.flush();
  }

  /** Send what is staged now (the link drained; before a control frame; full; at the wait cap). */
  flush(): void {
    if (this.length === 0) return;
    const leavingAt = this.frames > 0 ? residenceNow() : 0;
    const frame = encodeAudioAppendFrame(this.staging!.subarray(0, this.length));
    this.length = 0;
    this.flusher.unwatch(this);
    this.emit(frame);
    if (this.frames > 0) this.record(leavingAt);
  }

  /**
   * Each staged frame's residence: working = (staged - read) + (handed to the socket - left staging), the wait =
   * left staging - staged.
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
 * The one timer of an adapter instance for the wait cap (a {@link SharedTicker}): armed only while some session has
 * audio staged (a link that has not drained), it ticks every half cap and flushes what has waited half a cap or more,
 * so nothing waits much past `maxWaitMs`. Thousands of sessions, one timeout, and none at all while every link keeps up.
 */
export class AppendFlusher {
  readonly stagingBytes: number;
  private readonly ticker: SharedTicker<AppendCoalescer>;

  constructor(
    private readonly clock: VoiceClock,
    /** The longest staged audio waits for a link to drain (VOICE_PROVIDER_APPEND_MS). */
    readonly maxWaitMs: number,
    /** The adapter instance's residence figures, recorded into by every session's coalescer. */
    readonly residence?: RelayResidence,
  ) {
    if (!(maxWaitMs > 0)) throw new RangeError('the append wait cap must be positive');
    this.stagingBytes = STAGING_MS * BYTES_PER_MS;
    const half = Math.max(1, Math.floor(maxWaitMs / 2));
    this.ticker = new SharedTicker<AppendCoalescer>(clock, half, (coalescer, now) => {
      if (coalescer.stagedAt <= now - half) coalescer.flush();
    });
  }

  now(): number {
    return this.clock.now();
  }

  /** The largest staged append for audio of `bytesPerMs`, cut at whole samples of `sampleBytes`. */
  stagingBytesOf(bytesPerMs: number, sampleBytes: number): number {
    const bytes = Math.round(STAGING_MS * bytesPerMs);
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
