import type { VoiceClock } from '../../providers/voice/index.js';

/** Anything the supervisor watches: a cheap synchronous check against the clock, called once per tick. */
export interface Supervised {
  /** Compare deadlines with `now` and start whatever is due (ending is asynchronous; never await here). */
  check(now: number): void;
}

/**
 * One timer for every live session on this instance (thousands of sessions, one re-armed timeout, no timer per
 * session). Each tick walks the set and lets every session compare a handful of numbers with the clock: heartbeat
 * deadline, idle check-in and timeout, max-duration warning and cap, media grace, gate keepalives.
 *
 * The clock is injected: tests pass a ManualClock and advance 45 s of heartbeat silence without sleeping.
 */
export class Supervisor {
  private readonly watched = new Set<Supervised>();
  private timer: unknown;
  private running = false;

  constructor(
    readonly clock: VoiceClock,
    /** Resolution of every deadline (default 1 s; the shortest deadline is the 1 s heartbeat rate limit). */
    readonly tickMs = 1000,
  ) {}

  get size(): number {
    return this.watched.size;
  }

  add(item: Supervised): void {
    this.watched.add(item);
  }

  delete(item: Supervised): void {
    this.watched.delete(item);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Run one pass now (also what each timer tick does). */
  tick(): void {
    const now = this.clock.now();
    for (const item of this.watched) {
      try {
        item.check(now);
      } catch {
        // A broken session must not stop supervision of the others; sessions log their own failures.
      }
    }
  }

  private arm(): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (!this.running) return;
      this.tick();
      this.arm();
    }, this.tickMs);
  }
}
