/**
 * The relay's own latency, read where it happens: Parley's `parley_voice_relay_residence_seconds{direction}` and
 * `parley_voice_relay_append_wait_seconds` histograms from `/metrics`, scraped just before and just after the measured
 * window (outside the CPU window), and the difference turned into quantiles. Unlike the caller's round trip, this
 * does not include the load generator's or the simulator's scheduling on the shared machine.
 */
import { RESIDENCE_BUCKETS, quantileOf } from '../../src/providers/voice/residence.js';

/** Bucket counts (non-cumulative, +Inf last) per series key: `in`, `out`, `wait`. */
export type ResidenceScrape = Record<'in' | 'out' | 'wait', number[]>;

/** What a measurement reports: working p50/p99 per direction and the coalescing wait (ms), frame counts. */
export interface ResidenceFigures {
  inP50Ms: number;
  inP99Ms: number;
  outP50Ms: number;
  outP99Ms: number;
  waitP50Ms: number;
  waitP99Ms: number;
  /** Caller frames timed (working) and assistant chunks timed in the window. */
  inFrames: number;
  outFrames: number;
}

const SERIES: Array<[RegExp, keyof ResidenceScrape]> = [
  [/^parley_voice_relay_residence_seconds_bucket\{.*direction="caller_to_provider".*le="([^"]+)"/, 'in'],
  [/^parley_voice_relay_residence_seconds_bucket\{.*direction="provider_to_caller".*le="([^"]+)"/, 'out'],
  [/^parley_voice_relay_append_wait_seconds_bucket\{.*le="([^"]+)"/, 'wait'],
];

/** Scrape `/metrics` (bearer `token`); undefined when the server does not expose the histograms. */
export async function scrapeResidence(baseUrl: string, token: string): Promise<ResidenceScrape | undefined> {
  const res = await fetch(new URL('/metrics', baseUrl), { headers: { authorization: `Bearer ${token}` } }).catch(
    () => undefined,
  );
  if (res === undefined || !res.ok) return undefined;
  const text = await res.text();
  const slots = RESIDENCE_BUCKETS.length + 1;
  const cumulative: ResidenceScrape = { in: new Array(slots).fill(0), out: new Array(slots).fill(0), wait: [] };
  cumulative.wait = new Array(slots).fill(0);
  let found = false;
  for (const line of text.split('\n')) {
    for (const [pattern, key] of SERIES) {
      const m = pattern.exec(line);
      if (m === null) continue;
      const le = m[1] === '+Inf' ? RESIDENCE_BUCKETS.length : RESIDENCE_BUCKETS.indexOf(Number(m[1]));
      if (le < 0) continue;
      cumulative[key][le] = Number(line.slice(line.lastIndexOf(' ') + 1));
      found = true;
    }
  }
  if (!found) return undefined;
  // Cumulative -> per bucket.
  for (const key of ['in', 'out', 'wait'] as const) {
    const c = cumulative[key];
    for (let i = c.length - 1; i > 0; i--) c[i] = c[i]! - c[i - 1]!;
  }
  return cumulative;
}

/** The window's figures: after minus before. */
export function residenceBetween(before: ResidenceScrape, after: ResidenceScrape): ResidenceFigures {
  const delta = (key: keyof ResidenceScrape): number[] => after[key].map((v, i) => v - (before[key][i] ?? 0));
  const ms = (counts: number[], q: number): number => Math.round(quantileOf(counts, q) * 1e6) / 1e3;
  const total = (counts: number[]): number => counts.reduce((a, b) => a + b, 0);
  const input = delta('in');
  const output = delta('out');
  const wait = delta('wait');
  return {
    inP50Ms: ms(input, 0.5),
    inP99Ms: ms(input, 0.99),
    outP50Ms: ms(output, 0.5),
    outP99Ms: ms(output, 0.99),
    waitP50Ms: ms(wait, 0.5),
    waitP99Ms: ms(wait, 0.99),
    inFrames: total(input),
    outFrames: total(output),
  };
}

/** One cell: working p50/p99 per direction (ms), then the coalescing wait p50/p99. */
export function residenceCell(r: ResidenceFigures | undefined): string {
  if (r === undefined) return '';
  // The last bucket's bound (1 s) means "above it": the histogram cannot say by how much.
  const top = RESIDENCE_BUCKETS[RESIDENCE_BUCKETS.length - 1]! * 1000;
  const f = (v: number): string => (!Number.isFinite(v) ? '–' : v >= top ? `>${top}` : v.toFixed(3));
  const wait = r.waitP50Ms === r.waitP50Ms ? `; wait ${f(r.waitP50Ms)}/${f(r.waitP99Ms)}` : '';
  return `in ${f(r.inP50Ms)}/${f(r.inP99Ms)}, out ${f(r.outP50Ms)}/${f(r.outP99Ms)}${wait}`;
}
