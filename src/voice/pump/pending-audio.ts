/**
 * The little assistant audio a slow caller may have waiting in the relay: a fixed-capacity byte ring of samples
 * (any format: PCM16 or G.711) in front of the caller's socket. Audio is a sample stream, so frame boundaries do not matter: when it is
 * full the OLDEST samples are overwritten (a caller who fell behind hears the newest speech, never a growing
 * backlog, and memory stays bounded). The storage is allocated on the first congestion, not per session.
 */
export class PendingAudio {
  private ring: Buffer | null = null;
  private head = 0;
  private length = 0;
  /** Bytes overwritten before they could be sent (always whole samples). */
  droppedBytes = 0;

  constructor(
    readonly capacity: number,
    /** Bytes per sample (2 for PCM16, 1 for G.711): the ring drops whole samples only. */
    readonly sampleBytes = 2,
  ) {
    if (capacity <= 0 || capacity % sampleBytes !== 0)
      throw new Error('capacity must be a positive whole number of samples');
  }

  get bytes(): number {
    return this.length;
  }

  get isEmpty(): boolean {
    return this.length === 0;
  }

  /** Keep `audio` (copied; the caller may reuse it), dropping the oldest samples when the ring is full. */
  push(audio: Uint8Array): void {
    let data = audio;
    if (data.length > this.capacity) {
      // Bigger than everything we may hold: only its newest part survives.
      this.droppedBytes += this.length + (data.length - this.capacity);
      this.head = 0;
      this.length = 0;
      data = data.subarray(data.length - this.capacity);
    }
    const ring = (this.ring ??= Buffer.allocUnsafe(this.capacity));
    const overflow = this.length + data.length - this.capacity;
    if (overflow > 0) {
      this.head = (this.head + overflow) % this.capacity;
      this.length -= overflow;
      this.droppedBytes += overflow;
    }
    const tail = (this.head + this.length) % this.capacity;
    const first = Math.min(data.length, this.capacity - tail);
    ring.set(first === data.length ? data : data.subarray(0, first), tail);
    if (first < data.length) ring.set(data.subarray(first), 0);
    this.length += data.length;
  }

  /**
   * The oldest contiguous run of at most `max` bytes (a view into the ring, valid until the next push/consume).
   * Send it, then consume() what was sent.
   */
  peek(max: number): Buffer | null {
    if (this.length === 0 || this.ring === null) return null;
    const run = Math.min(this.length, this.capacity - this.head, max);
    return this.ring.subarray(this.head, this.head + run);
  }

  consume(bytes: number): void {
    const n = Math.min(bytes, this.length);
    this.head = (this.head + n) % this.capacity;
    this.length -= n;
    if (this.length === 0) this.head = 0;
  }

  /** Forget what is waiting (the call ended or the socket was replaced); the memory goes with it. */
  clear(): void {
    this.ring = null;
    this.head = 0;
    this.length = 0;
  }
}
