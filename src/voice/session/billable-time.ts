/**
 * The time a call is billed on its owner's clock: from the caller's join to the end, less every stretch without a
 * connected caller or without a live provider link. The two causes are one stretch while either holds, so where they
 * overlap the time is taken off once; nothing before the join counts either way.
 */
export class BillableTime {
  /** When the caller first connected (undefined: nobody joined yet). */
  joinedAt: number | undefined;
  /** Closed unbilled stretches after the join. */
  private unbilledMs = 0;
  /** Since when the open unbilled stretch runs (undefined: caller connected and link live). */
  private since: number | undefined;
  /** No stretch reaches back before this (the join, or the end of the last stretch: counted already). */
  private floor = -Infinity;

  /** The caller connected for the first time: billing starts here (a link already down is unbilled from here). */
  join(now: number): void {
    if (this.joinedAt !== undefined) return;
    this.joinedAt = now;
    this.floor = now;
    if (this.since !== undefined) this.since = Math.max(this.since, now);
  }

  /** A call taken over from a dead owner: connected since `at` (what came before is carried as seconds). */
  resume(at: number): void {
    this.joinedAt = at;
    this.floor = at;
  }

  /** The caller left or the link went down at `at` (a silent link's start lies in the past). */
  open(at: number): void {
    const start = Math.max(at, this.floor);
    if (this.since === undefined || start < this.since) this.since = start;
  }

  /** One of the two came back; `clear`: the caller is connected and the link live again, so the stretch ends. */
  close(now: number, clear: boolean): void {
    if (this.since === undefined || !clear) return;
    if (this.joinedAt !== undefined) this.unbilledMs += Math.max(0, now - this.since);
    this.since = undefined;
    this.floor = now;
  }

  /** Billed milliseconds as of `now` (0 before the join). */
  billedMs(now: number): number {
    if (this.joinedAt === undefined) return 0;
    const away = this.unbilledMs + (this.since !== undefined ? Math.max(0, now - this.since) : 0);
    return Math.max(0, now - this.joinedAt - away);
  }
}

/**
 * Billed seconds as whole seconds: the nearest one (a call is billed its connected time within half a second; rounding
 * up would add up to a whole second to every call), and at least 1 for any connected time at all.
 */
export function wholeBillableSeconds(seconds: number): number {
  return seconds <= 0 ? 0 : Math.max(1, Math.round(seconds));
}
