import { createWriteStream, type WriteStream } from 'node:fs';
import {
  bytesPerMs,
  bytesPerSample,
  DEFAULT_AUDIO_FORMAT,
  silenceByte,
  type VoiceAudioFormat,
} from '../../providers/voice/index.js';
const CHUNK_BYTES = 64 * 1024;

/**
 * One direction of a recorded call, streamed to a raw file in the call's format while the call runs (never held in
 * memory).
 * Audio is placed on the call's timeline: when it arrives later than the track's end by more than `slackMs`
 * (the caller paused its stream, the assistant was silent), silence fills the gap, so both tracks line up when they
 * are interleaved at the end. Audio that arrives early (a provider sends faster than real time) is appended.
 *
 * Writes are batched into 64 KiB chunks (one allocation per chunk, not per frame). If the disk falls behind by more
 * than `maxBacklogBytes`, further audio is dropped and counted rather than queued.
 */
export class TrackWriter {
  private readonly stream: WriteStream;
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  private failed: Error | undefined;
  private closed: Promise<void> | undefined;
  /** Bytes on the track so far (audio and filled silence). */
  bytes = 0;
  droppedBytes = 0;
  private readonly bytesPerMs: number;
  private readonly sampleBytes: number;
  private readonly silence: number;

  constructor(
    readonly path: string,
    private readonly startedAt: number,
    private readonly slackMs = 100,
    private readonly maxBacklogBytes = 4 * 1024 * 1024,
    audio: VoiceAudioFormat = DEFAULT_AUDIO_FORMAT,
  ) {
    this.bytesPerMs = bytesPerMs(audio);
    this.sampleBytes = bytesPerSample(audio);
    this.silence = silenceByte(audio);
    this.stream = createWriteStream(path, { flags: 'w', mode: 0o600 });
    this.stream.on('error', (err) => {
      this.failed ??= err;
    });
  }

  get error(): Error | undefined {
    return this.failed;
  }

  /** Add audio heard at `nowMs` (same clock as `startedAt`). Copies it; the caller may reuse `audio`. */
  write(audio: Uint8Array, nowMs: number): void {
    if (this.closed !== undefined || this.failed !== undefined) return;
    if (this.stream.writableLength > this.maxBacklogBytes) {
      this.droppedBytes += audio.length;
      return;
    }
    const at = Math.floor((nowMs - this.startedAt) * this.bytesPerMs);
    const due = at - (at % this.sampleBytes);
    if (due - this.bytes > this.slackMs * this.bytesPerMs) this.fill(due - this.bytes, null);
    this.fill(audio.length, audio);
  }

  private fill(length: number, pcm: Uint8Array | null): void {
    let done = 0;
    while (done < length) {
      const n = Math.min(length - done, CHUNK_BYTES - this.used);
      if (pcm === null) this.chunk.fill(this.silence, this.used, this.used + n);
      else this.chunk.set(pcm.subarray(done, done + n), this.used);
      this.used += n;
      done += n;
      if (this.used === CHUNK_BYTES) this.flushChunk();
    }
    this.bytes += length;
  }

  private flushChunk(): void {
    if (this.used === 0) return;
    const full = this.used === CHUNK_BYTES;
    this.stream.write(full ? this.chunk : this.chunk.subarray(0, this.used));
    this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
  }

  /** Write what is left and close the file. Resolves once it is on disk; rejects if writing failed. */
  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve, reject) => {
      if (this.failed === undefined) this.flushChunk();
      this.stream.end(() => (this.failed ? reject(this.failed) : resolve()));
      this.stream.once('error', reject);
    });
    return this.closed;
  }
}
