import type { VoiceClock } from './clock.js';

/** What the ticker probes: one session's link (GptLiveWire.probe through the session, which knows its phase). */
export interface KeepaliveProbe {
  probe(): void;
}

/**
 * The one keepalive timer of an adapter instance (ARCHITECTURE: timers are shared per instance): armed while some
 * session is open, it probes every open session's link each `intervalMs`. A link heard from since the last tick is
 * left alone, a silent one is pinged, and one that stayed silent through the ping is cut a tick later: a half-open
 * link is detected within two to three intervals of going silent, and a thousand calls cost one timer, not a
 * thousand.
 */
export class KeepaliveTicker {
  private readonly probes = new Set<KeepaliveProbe>();
  private timer: unknown = undefined;

  constructor(
    private readonly clock: VoiceClock,
    readonly intervalMs: number,
  ) {
    if (!(intervalMs > 0)) throw new RangeError('the keepalive interval must be positive');
  }

  /** Links probed on each tick (tests and metrics). */
  get size(): number {
    return this.probes.size;
  }

  watch(probe: KeepaliveProbe): void {
    this.probes.add(probe);
    if (this.timer === undefined) this.timer = this.clock.setTimeout(this.tick, this.intervalMs);
  }

  unwatch(probe: KeepaliveProbe): void {
    this.probes.delete(probe);
    if (this.probes.size === 0 && this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    // A probe may cut its link, which may unwatch it: deleting from a Set while iterating it is safe.
    for (const probe of this.probes) probe.probe();
    if (this.probes.size > 0 && this.timer === undefined) this.timer = this.clock.setTimeout(this.tick, this.intervalMs);
  };
}
