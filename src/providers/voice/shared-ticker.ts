import type { VoiceClock } from './clock.js';

/**
 * One timer for many members (timers are shared per instance, not one per call): armed while the set is not empty, it
 * calls `visit` on every member each `intervalMs`, then re-arms. The adapter has two: the append flusher (partial
 * windows of caller audio) and the keepalive probe (provider links), so a thousand calls cost two timers (the
 * keepalive used to be one per call). Members may leave or join during a tick.
 */
export class SharedTicker<T> {
  private readonly members = new Set<T>();
  private timer: unknown = undefined;

  constructor(
    private readonly clock: VoiceClock,
    readonly intervalMs: number,
    private readonly visit: (member: T, now: number) => void,
  ) {
    if (!(intervalMs > 0)) throw new RangeError('a shared ticker needs a positive interval');
  }

  /** Members visited on each tick (tests and metrics). */
  get size(): number {
    return this.members.size;
  }

  add(member: T): void {
    this.members.add(member);
    if (this.timer === undefined) this.timer = this.clock.setTimeout(this.tick, this.intervalMs);
  }

  delete(member: T): void {
    this.members.delete(member);
    if (this.members.size === 0 && this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    const now = this.clock.now();
    // Deleting from a Set while iterating it is safe; a member added during the tick is visited next time.
    for (const member of this.members) this.visit(member, now);
    if (this.members.size > 0 && this.timer === undefined)
      this.timer = this.clock.setTimeout(this.tick, this.intervalMs);
  };
}

/** A provider link's keepalive probe (GptLiveWire.probe, through its session, which knows its phase). */
export interface KeepaliveProbe {
  probe(): void;
}

/**
 * The adapter's keepalive: every `intervalMs` each open link is probed. A link heard from since the last tick is left
 * alone, a silent one is pinged, and one that stayed silent through the ping is cut a tick later: a half-open link
 * is detected within two to three intervals of going silent.
 */
export function keepaliveTicker(clock: VoiceClock, intervalMs: number): SharedTicker<KeepaliveProbe> {
  return new SharedTicker<KeepaliveProbe>(clock, intervalMs, (link) => link.probe());
}
