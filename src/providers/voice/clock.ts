/**
 * Time as a dependency: reconnect backoff, the 3 s lock timeout and close timeouts read it, so tests can advance
 * a manual clock instead of sleeping.
 */
export interface VoiceClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: VoiceClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    // A pending provider timer must never keep a draining process alive.
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A clock that only moves when told to; timers fire in due order inside advance(). For tests and benches. */
export class ManualClock implements VoiceClock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Number of timers not yet fired. */
  get pending(): number {
    return this.timers.size;
  }

  /** Move time forward, firing every timer that falls due (including ones scheduled by fired timers). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let nextId = -1;
      let nextAt = Infinity;
      for (const [id, timer] of this.timers) {
        if (timer.at <= target && timer.at < nextAt) {
          nextAt = timer.at;
          nextId = id;
        }
      }
      if (nextId === -1) break;
      const timer = this.timers.get(nextId)!;
      this.timers.delete(nextId);
      this.current = Math.max(this.current, timer.at);
      timer.fn();
    }
    this.current = target;
  }
}
