import { readFile, rm, writeFile } from 'node:fs/promises';
import { bytesPerMs, bytesPerSample, silenceByte, type VoiceAudioFormat } from '../../providers/voice/index.js';
import type { MultipartUpload } from './store/index.js';
import { wavHeader } from './wav.js';

/** S3's smallest part but the last: every part of a streamed recording is this size, the last one at most. */
export const STREAM_PART_BYTES = 5 * 1024 * 1024;

export interface StereoStreamOptions {
  /** Audio later than this behind the call's clock is appended rather than placed (default 1000 ms). */
  lagMs?: number;
  /** Audio that arrives later than its track's end by more than this leaves silence before it (default 100 ms). */
  slackMs?: number;
  /** Parts waiting for the bucket before the stream gives up (the recording is then built from disk at the end). */
  maxQueuedParts?: number;
  /** Waits between attempts at one part. */
  retryMs?: number[];
  /** Where part 1 waits (it carries the WAV header, written last): on disk, not in memory, for the call's length. */
  firstPartPath?: string;
  /** Part size (tests of small calls; at least 5 MiB for a real bucket). */
  partBytes?: number;
}

/** One direction's audio not yet interleaved, placed on the call's timeline; silence is kept as a length, not bytes. */
class PendingTrack {
  private chunks: Array<Buffer | number> = [];
  private head = 0;
  /** Where this track ends on the timeline, in bytes of one channel. */
  end = 0;

  constructor(private readonly silence: number) {}

  push(audio: Buffer): void {
    this.chunks.push(audio);
    this.end += audio.length;
  }

  padTo(position: number): void {
    if (position <= this.end) return;
    this.chunks.push(position - this.end);
    this.end = position;
  }

  /** The next `n` bytes (the track holds at least that many). */
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let done = 0;
    while (done < n) {
      const chunk = this.chunks[0]!;
      const size = typeof chunk === 'number' ? chunk : chunk.length;
      const k = Math.min(n - done, size - this.head);
      if (typeof chunk === 'number') out.fill(this.silence, done, done + k);
      else chunk.copy(out, done, this.head, this.head + k);
      done += k;
      this.head += k;
      if (this.head === size) {
        this.chunks.shift();
        this.head = 0;
      }
    }
    return out;
  }
}

/** Interleaved a block at a time (a long silence is never one allocation). */
const BLOCK_BYTES = 64 * 1024;

/**
 * One two-channel WAV (left: the caller, right: the assistant, aligned on the call's clock) written to a multipart
 * upload while the call runs: audio is interleaved as soon as both directions are known up to a point (or the clock
 * is `lagMs` past it: a silent direction is padded with silence), and every 5 MiB of it goes to the bucket as a part.
 * Memory stays bounded whatever the call's length: the part being filled, and at most `maxQueuedParts` parts on
 * their way. Part 1 carries the WAV header, whose sizes are known only at the end: it waits on disk and is uploaded
 * last. The format is the call's own (PCM16, or G.711 μ-law / A-law byte for byte).
 *
 * When the bucket refuses a part past its retries, or parts pile up beyond the bound, the stream gives up (aborts the
 * upload, frees its memory) and {@link finish} answers null: the caller of this class then builds the recording from
 * the tracks it also keeps on disk, so no audio is lost.
 */
export class StereoStream {
  state: 'streaming' | 'failed' | 'finished' = 'streaming';
  failure: unknown;
  private readonly left: PendingTrack;
  private readonly right: PendingTrack;
  private readonly sample: number;
  private readonly perMs: number;
  private readonly headerBytes: number;
  private readonly partBytes: number;
  /** Bytes of one channel interleaved so far. */
  private committed = 0;
  private part: Buffer;
  private used: number;
  private partNumber = 1;
  private first: Buffer | Promise<void> | undefined;
  private upload: Promise<MultipartUpload> | undefined;
  private readonly inflight = new Set<Promise<void>>();
  /** Parts uploaded (tests, logs). */
  partsUploaded = 0;

  constructor(
    private readonly begin: () => Promise<MultipartUpload>,
    private readonly audio: VoiceAudioFormat,
    private readonly startedAt: number,
    private readonly now: () => number,
    private readonly options: StereoStreamOptions = {},
  ) {
    const silence = silenceByte(audio);
    this.left = new PendingTrack(silence);
    this.right = new PendingTrack(silence);
    this.sample = bytesPerSample(audio);
    this.perMs = bytesPerMs(audio);
    this.headerBytes = wavHeader(0, 2, audio).length;
    this.partBytes = options.partBytes ?? STREAM_PART_BYTES;
    this.part = Buffer.allocUnsafe(this.partBytes);
    this.used = this.headerBytes;
  }

  /** Bytes of the WAV so far (header included). */
  get bytes(): number {
    return this.headerBytes + this.committed * 2;
  }

  caller(audio: Uint8Array): void {
    this.write(this.left, audio);
  }

  assistant(audio: Uint8Array): void {
    this.write(this.right, audio);
  }

  private dueAt(nowMs: number): number {
    const at = Math.max(0, Math.floor((nowMs - this.startedAt) * this.perMs));
    return at - (at % this.sample);
  }

  private write(track: PendingTrack, audio: Uint8Array): void {
    if (this.state !== 'streaming') return;
    const now = this.now();
    const due = this.dueAt(now);
    if (due - track.end > (this.options.slackMs ?? 100) * this.perMs) track.padTo(due);
    track.push(Buffer.from(audio));
    this.commit(now, false);
  }

  /** Interleave what both tracks hold up to a common point (all of it at the end) into parts. */
  private commit(nowMs: number, all: boolean): void {
    const lag = Math.floor((this.options.lagMs ?? 1000) * this.perMs);
    let target = all
      ? Math.max(this.left.end, this.right.end)
      : Math.max(Math.min(this.left.end, this.right.end), this.dueAt(nowMs) - lag);
    target -= target % this.sample;
    // Interleave in blocks of about a tenth of a second (not per frame); all of it at the end.
    if (target <= this.committed || (!all && target - this.committed < 100 * this.perMs)) return;
    this.left.padTo(target);
    this.right.padTo(target);
    while (this.committed < target && this.state === 'streaming') {
      const n = Math.min(BLOCK_BYTES - (BLOCK_BYTES % this.sample), target - this.committed);
      this.interleave(this.left.take(n), this.right.take(n), n);
      this.committed += n;
    }
  }

  /** `n` bytes of each channel into the parts, sample by sample (left first). */
  private interleave(l: Buffer, r: Buffer, n: number): void {
    const s = this.sample;
    let i = 0;
    while (i < n) {
      const room = (this.partBytes - this.used) / (2 * s);
      const count = Math.min(room * s, n - i);
      const o = this.part;
      let j = this.used;
      if (s === 2) {
        for (let k = i; k < i + count; k += 2, j += 4) {
          o[j] = l[k]!;
          o[j + 1] = l[k + 1]!;
          o[j + 2] = r[k]!;
          o[j + 3] = r[k + 1]!;
        }
      } else {
        for (let k = i; k < i + count; k++, j += 2) {
          o[j] = l[k]!;
          o[j + 1] = r[k]!;
        }
      }
      this.used = j;
      i += count;
      if (this.used === this.partBytes) this.rotate();
      if (this.state !== 'streaming') return;
    }
  }

  private rotate(): void {
    const full = this.part;
    if (this.partNumber === 1) {
      const path = this.options.firstPartPath;
      this.first = path === undefined ? full : writeFile(path, full, { mode: 0o600 });
      this.upload ??= this.begin();
      // An upload that cannot begin fails the stream (its parts would have nowhere to go).
      this.upload.catch((err: unknown) => this.fail(err));
    } else {
      this.send(this.partNumber, full, false);
    }
    this.partNumber++;
    this.part = Buffer.allocUnsafe(this.partBytes);
    this.used = 0;
  }

  private send(partNumber: number, body: Buffer, last: boolean): void {
    if (!last && this.inflight.size >= (this.options.maxQueuedParts ?? 2)) {
      this.fail(new Error('recording parts piled up: the bucket is slower than the call'));
      return;
    }
    const waits = this.options.retryMs ?? [500, 2000, 5000];
    const sent: Promise<void> = (async () => {
      const upload = await this.upload!;
      for (let attempt = 0; ; attempt++) {
        try {
          await upload.uploadPart(partNumber, body);
          this.partsUploaded++;
          return;
        } catch (err) {
          const wait = waits[attempt];
          if (wait === undefined || this.state === 'failed') throw err;
          // Not unref'd: a part on its way is work the process finishes (seconds at most).
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    })()
      .catch((err: unknown) => this.fail(err))
      .finally(() => this.inflight.delete(sent));
    this.inflight.add(sent);
  }

  /** Wait until the parts on their way are below the bound (a feeder faster than real time: tests). */
  async writable(): Promise<void> {
    while (this.inflight.size >= (this.options.maxQueuedParts ?? 2)) await Promise.race(this.inflight);
  }

  private fail(err: unknown): void {
    if (this.state !== 'streaming') return;
    this.state = 'failed';
    this.failure = err;
    this.part = Buffer.alloc(0);
    this.first = undefined;
    if (this.options.firstPartPath !== undefined) void rm(this.options.firstPartPath, { force: true });
    void this.upload?.then((u) => u.abort()).catch(() => undefined);
  }

  /**
   * The call ended: interleave the rest, upload the last part and part 1 (with the header's sizes), and complete the
   * upload. Resolves with the recording's size, or null when the stream gave up (nothing of it is left in the bucket).
   */
  async finish(): Promise<{ bytes: number } | null> {
    if (this.state !== 'streaming') return null;
    this.commit(this.now(), true);
    if (this.state !== 'streaming') return null;
    const header = wavHeader(this.committed * 2, 2, this.audio);
    let first: Buffer;
    if (this.partNumber === 1) {
      first = this.part.subarray(0, this.used);
    } else {
      if (this.used > 0) this.send(this.partNumber, this.part.subarray(0, this.used), true);
      const held = this.first;
      if (Buffer.isBuffer(held)) {
        first = held;
      } else {
        await held;
        first = await readFile(this.options.firstPartPath!);
      }
    }
    header.copy(first, 0);
    this.upload ??= this.begin();
    this.send(1, first, true);
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    if (this.options.firstPartPath !== undefined) await rm(this.options.firstPartPath, { force: true });
    if (this.state !== 'streaming') return null;
    try {
      await (await this.upload).complete();
    } catch (err) {
      this.fail(err);
      return null;
    }
    this.state = 'finished';
    return { bytes: header.length + this.committed * 2 };
  }
}
