/**
 * How long the relay holds each audio frame, measured where it happens: from reading the frame on one side to handing
 * it to the other side's socket. Two directions (`caller_to_provider`, `provider_to_caller`) of *working* time (what
 * Parley spends on the frame: checks, copies, base64 and JSON framing, the socket write), and, for caller audio,
 * the time a frame waits, staged, for the provider link's previous write to drain (at most VOICE_PROVIDER_APPEND_MS;
 * 0 for a frame sent at once) as a figure of its own.
 *
 * One per provider instance (an app), shared by all its calls. Cheap by construction: a frame costs a clock read or
 * two (`performance.now()`: monotonic, a double, no allocation) and one bucket increment in preallocated arrays; the
 * figures are turned into Prometheus histograms only when /metrics is scraped.
 *
 * "Read" is when Parley's event loop takes the frame from its socket: time it waited in the kernel before that (an
 * instance too busy to read) shows in the event-loop delay metrics, not here.
 *
 * Not in these figures: time behind a provider socket already past its high-water mark (a frame's time ends when it is
 * handed to the socket or, with the socket backed up because the provider is not reading, to the adapter's bounded
 * queue in front of it) and assistant audio held in the ring of a caller that reads too slowly (the caller's own
 * backlog): both are counted where they happen (dropped frames, ring peaks), and neither is Parley's work.
 */

/** Bucket upper bounds in seconds: fine below a millisecond (working time), then up to a second (window waits). */
export const RESIDENCE_BUCKETS: readonly number[] = Object.freeze([
  0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.00075, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15,
  0.25, 0.5, 1,
]);

/** Monotonic milliseconds (fractional): the relay's residence clock. */
export const residenceNow: () => number = performance.now.bind(performance);

/** One histogram as plain arrays: counts per bucket (the last slot is +Inf), sum in seconds and count. */
export class ResidenceHistogram {
  /** counts[i]: observations <= RESIDENCE_BUCKETS[i] and above the bound before; counts[length]: above the last. */
  readonly counts = new Float64Array(RESIDENCE_BUCKETS.length + 1);
  sumSeconds = 0;
  count = 0;

  /** Record `ms` milliseconds, `times` times (frames that shared one wait). */
  observeMs(ms: number, times = 1): void {
    const seconds = ms > 0 ? ms / 1000 : 0;
    const bounds = RESIDENCE_BUCKETS;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    this.counts[i]! += times;
    this.sumSeconds += seconds * times;
    this.count += times;
  }

  /** Record one observation of 0 (a frame that did not wait): no bucket search, no sum. */
  observeZero(): void {
    this.counts[0]!++;
    this.count++;
  }

  /** Approximate quantile in seconds (linear within the bucket): for reports, not for alerts. */
  quantile(q: number): number {
    return quantileOf(this.counts, q);
  }
}

/** Quantile (seconds) of bucket counts laid out like {@link ResidenceHistogram.counts}; NaN when empty. */
export function quantileOf(counts: ArrayLike<number>, q: number): number {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (seen + c >= rank && c > 0) {
      const lower = i === 0 ? 0 : RESIDENCE_BUCKETS[i - 1]!;
      const upper = i < RESIDENCE_BUCKETS.length ? RESIDENCE_BUCKETS[i]! : lower;
      return lower + (upper - lower) * ((rank - seen) / c);
    }
    seen += c;
  }
  return RESIDENCE_BUCKETS[RESIDENCE_BUCKETS.length - 1]!;
}

export type ResidenceDirection = 'caller_to_provider' | 'provider_to_caller';

export class RelayResidence {
  /** Working time of caller frames, read by the pump to handed to the provider socket. */
  readonly callerToProvider = new ResidenceHistogram();
  /** Working time of assistant audio, read from the provider socket to handed to the caller's socket. */
  readonly providerToCaller = new ResidenceHistogram();
  /** Time caller frames waited staged for the provider link to drain (0 for a frame sent at once). */
  readonly appendWindow = new ResidenceHistogram();
  /**
   * When the provider message being handled now was read: stamped by the provider wire just before it hands the
   * audio on, read synchronously by the pump in the same call (one stamp for every call of the instance: JavaScript
   * runs one handler at a time, so no per-frame object carries it).
   */
  inboundReadAt = Number.NaN;

  of(direction: ResidenceDirection): ResidenceHistogram {
    return direction === 'caller_to_provider' ? this.callerToProvider : this.providerToCaller;
  }
}
