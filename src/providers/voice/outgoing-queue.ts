/** What the queue writes to: a `ws` WebSocket fits, and so does a fake in tests. */
export interface OutgoingSink {
  readonly bufferedAmount: number;
  send(data: string | Buffer, options: { binary: boolean; compress: boolean }, cb?: (err?: Error) => void): void;
}

/** A frame: control commands are strings, audio appends are pre-encoded Buffers (protocol.encodeAudioAppendFrame). */
export type OutgoingFrame = string | Buffer;

const SEND_OPTIONS = { binary: false, compress: false } as const;

/**
 * Bounded outgoing queue in front of the provider socket.
 *
 * Frames go straight to the socket while the bytes it has in flight stay under `highWaterBytes`. Above that they
 * wait here, and a watched write's completion (a bound callback, no per-frame closure) flushes what fits.
 *
 * Only writes made while the socket already buffers bytes are watched. A write to a socket with nothing buffered
 * completes at once (the kernel takes it; Node then drops its buffered length at once) and is handed to `ws` without
 * a callback: Node's stream then schedules nothing for it, where a callback costs a `process.nextTick` and a deferred
 * call per frame. So whenever frames wait here, a watched write is ahead of them, and its completion flushes them (a
 * frame that finds the socket over the mark with no watched write ahead goes out anyway, watched: the mark is soft).
 *
 * When full (`maxQueuedBytes` of waiting frames) the OLDEST waiting audio frames are discarded and counted: for live
 * speech, bounded latency beats completeness, the same rule the relay follows for a slow caller. Control frames (mute,
 * instructions, close) are never discarded; they wait in order. With no socket attached (during a reconnect) control
 * frames wait and audio is not accepted at all (the session refuses it before it gets here).
 */
export class OutgoingQueue {
  private sink: OutgoingSink | null = null;
  private items: OutgoingFrame[] = [];
  private audio: boolean[] = [];
  private head = 0;
  private queuedBytes = 0;
  /** Watched writes (made while the socket buffered bytes) whose completion has not been reported yet. */
  private watched = 0;
  /** Audio frames discarded because the queue was full or the link dropped. */
  dropped = 0;

  constructor(
    private readonly highWaterBytes: number,
    private readonly maxQueuedBytes: number,
    /** Called when the last watched write completed with nothing waiting (the append coalescer's cue). */
    private readonly onIdle?: () => void,
  ) {
    this.onWritten = this.onWritten.bind(this);
  }

  /**
   * Nothing in flight on the link: the socket buffers no bytes (every write handed to it completed) and nothing waits
   * here. A frame sent now goes out alone, at once.
   */
  get idle(): boolean {
    const sink = this.sink;
    return sink !== null && this.head === this.items.length && sink.bufferedAmount === 0;
  }

  get length(): number {
    return this.items.length - this.head;
  }

  get bytes(): number {
    return this.queuedBytes;
  }

  attach(sink: OutgoingSink): void {
    this.sink = sink;
    this.watched = 0;
    this.flush();
  }

  /** Detach on a dropped link. Waiting audio is stale by the time a new link exists, so it is discarded. */
  detach(): void {
    this.sink = null;
    this.watched = 0;
    const keptItems: OutgoingFrame[] = [];
    const keptAudio: boolean[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      if (this.audio[i]) {
        this.dropped++;
      } else {
        keptItems.push(this.items[i]!);
        keptAudio.push(false);
      }
    }
    this.items = keptItems;
    this.audio = keptAudio;
    this.head = 0;
    this.queuedBytes = keptItems.reduce((sum, s) => sum + s.length, 0);
  }

  /** Queue or send one frame. `isAudio` frames may be discarded when full; others never are. */
  push(frame: OutgoingFrame, isAudio: boolean): void {
    const sink = this.sink;
    if (sink !== null && this.head === this.items.length) {
      const buffered = sink.bufferedAmount;
      if (buffered === 0) return sink.send(frame, SEND_OPTIONS);
      if (buffered <= this.highWaterBytes || this.watched === 0) {
        this.watched++;
        return sink.send(frame, SEND_OPTIONS, this.onWritten);
      }
    }
    this.items.push(frame);
    this.audio.push(isAudio);
    this.queuedBytes += frame.length;
    if (this.queuedBytes > this.maxQueuedBytes) this.shed();
  }

  private shed(): void {
    // Audio dominates the queue, so the oldest audio frame is almost always at the head: amortised O(1).
    for (let i = this.head; i < this.items.length && this.queuedBytes > this.maxQueuedBytes; i++) {
      if (!this.audio[i]) continue;
      const frame = this.items[i]!;
      if (frame === '') continue;
      this.queuedBytes -= frame.length;
      this.items[i] = '';
      this.dropped++;
    }
    this.skipEmpty();
  }

  private skipEmpty(): void {
    while (this.head < this.items.length && this.items[this.head] === '') this.head++;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.audio.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.audio = this.audio.slice(this.head);
      this.head = 0;
    }
  }

  private onWritten(): void {
    // A completion from a socket already replaced may land here: it only makes the link look drained a write early.
    if (this.watched > 0) this.watched--;
    if (this.head !== this.items.length) this.flush();
    else if (this.watched === 0) this.onIdle?.();
  }

  private flush(): void {
    const sink = this.sink;
    if (sink === null) return;
    while (this.head < this.items.length && (sink.bufferedAmount <= this.highWaterBytes || this.watched === 0)) {
      const frame = this.items[this.head]!;
      this.items[this.head] = '';
      this.head++;
      if (frame === '') continue;
      this.queuedBytes -= frame.length;
      // Rare (the socket was backed up): every write is watched, so the next completion flushes the rest.
      this.watched++;
      sink.send(frame, SEND_OPTIONS, this.onWritten);
    }
    this.skipEmpty();
  }

  /** Forget everything (session over). */
  clear(): void {
    this.sink = null;
    this.watched = 0;
    this.items = [];
    this.audio = [];
    this.head = 0;
    this.queuedBytes = 0;
  }
}
