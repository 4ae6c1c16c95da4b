/** Latency samples with percentiles (kept exactly up to a bound, then a uniform reservoir). */
export class Samples {
  private readonly values: number[] = [];
  private seen = 0;
  private total = 0;
  private maxValue = -Infinity;
  constructor(private readonly capacity = 200_000) {}

  add(value: number): void {
    if (!Number.isFinite(value)) return;
    this.seen++;
    this.total += value;
    if (value > this.maxValue) this.maxValue = value;
    if (this.values.length < this.capacity) this.values.push(value);
    else {
      const slot = Math.floor(Math.random() * this.seen);
      if (slot < this.capacity) this.values[slot] = value;
    }
  }

  get count(): number {
    return this.seen;
  }

  /** Nearest-rank percentile (p in 0..100), undefined without samples. */
  percentile(p: number): number | undefined {
    if (this.values.length === 0) return undefined;
    const sorted = [...this.values].sort((a, b) => a - b);
    const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
    return sorted[rank];
  }

  summary(): LatencySummary | null {
    if (this.seen === 0) return null;
    const round = (v: number | undefined) => (v === undefined ? 0 : Math.round(v * 10) / 10);
    return {
      count: this.seen,
      p50: round(this.percentile(50)),
      p95: round(this.percentile(95)),
      p99: round(this.percentile(99)),
      max: round(this.maxValue),
      mean: round(this.total / this.seen),
    };
  }
}

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Counts by key, e.g. refusals by "429 voice_concurrency_limit". */
export class Tally {
  readonly counts: Record<string, number> = {};
  add(key: string, n = 1): void {
    this.counts[key] = (this.counts[key] ?? 0) + n;
  }
  get total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }
}
