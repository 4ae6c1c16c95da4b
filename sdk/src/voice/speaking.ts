/** Audio arrives in network-sized bursts: a gap shorter than this between them does not end `speaking`. */
export const SPEAKING_TAIL_MS = 300;

/** Monotonic milliseconds (performance.now()). */
export function now(): number {
  return globalThis.performance.now();
}

/**
 * Whether the assistant is speaking: as long as the audio heard takes to play from now (or from the end of what is
 * already queued), plus a short tail. One timer at most, armed once per stretch of speech and re-armed only when it
 * fires early (no timer work per chunk: a load generator receives thousands of chunks a second).
 */
export class SpeakingClock {
  private until = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** Called once speech has stopped (the tail passed), unless `finished()`. */
    private readonly onQuiet: () => void,
    private readonly finished: () => boolean,
  ) {}

  get speaking(): boolean {
    return now() < this.until + SPEAKING_TAIL_MS;
  }

  /** `ms` of audio was heard just now. */
  heard(ms: number): void {
    const t = now();
    this.until = Math.max(this.until, t) + ms;
    if (this.timer === undefined) this.arm(t);
  }

  /** The gate closed: what was queued will not be played. */
  silence(): void {
    this.until = 0;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(t: number): void {
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const at = now();
        if (!this.finished() && at < this.until + SPEAKING_TAIL_MS) this.arm(at);
        else this.onQuiet();
      },
      Math.ceil(this.until + SPEAKING_TAIL_MS - t) + 1,
    );
  }
}
