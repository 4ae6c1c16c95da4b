/**
 * What the server saw, next to what the callers saw: the relay's residence histograms, read from Parley's `/metrics`
 * before and after the test (`--metrics-token`). The round trip a caller measures includes the network and the
 * provider; the residence is the time Parley itself held each audio frame (working time per direction, and the time
 * caller frames waited, staged, for a provider write to drain). Through a proxy, each scrape reaches one
 * instance: point `--metrics-url` at an instance (or its METRICS_PORT) for per-instance figures.
 */

/** A histogram's quantiles over the test (ms), from the difference of two scrapes; null when nothing was timed. */
export interface ServerHistogram {
  count: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

export interface ServerFigures {
  metricsUrl: string;
  /** Working time per audio frame: read on one side to handed to the other side's socket. */
  callerToProviderMs: ServerHistogram | null;
  providerToCallerMs: ServerHistogram | null;
  /** Time caller frames waited, staged, for the provider link to drain (at most VOICE_PROVIDER_APPEND_MS). */
  appendWaitMs: ServerHistogram | null;
  /** Why figures are missing (metrics off, wrong token, an older server), if they are. */
  error?: string;
}

/** Cumulative bucket counts by upper bound (seconds; Infinity for +Inf), plus sum and count. */
interface Scraped {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

export type Scrape = Map<string, Scraped>;

const SERIES: Record<string, { name: string; direction?: string }> = {
  in: { name: 'parley_voice_relay_residence_seconds', direction: 'caller_to_provider' },
  out: { name: 'parley_voice_relay_residence_seconds', direction: 'provider_to_caller' },
  wait: { name: 'parley_voice_relay_append_wait_seconds' },
};

/** Read the residence histograms from Prometheus text (instance labels ignored: one scrape is one instance). */
export function parseResidence(text: string): Scrape {
  const out: Scrape = new Map();
  for (const [key, s] of Object.entries(SERIES)) {
    const scraped: Scraped = { buckets: new Map(), sum: 0, count: 0 };
    for (const line of text.split('\n')) {
      if (!line.startsWith(s.name)) continue;
      if (s.direction !== undefined && !line.includes(`direction="${s.direction}"`)) continue;
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      const suffix = line.slice(s.name.length, line.indexOf('{') === -1 ? line.indexOf(' ') : line.indexOf('{'));
      if (suffix === '_bucket') {
        const le = /le="([^"]+)"/.exec(line)?.[1];
        if (le !== undefined) scraped.buckets.set(le === '+Inf' ? Infinity : Number(le), value);
      } else if (suffix === '_sum') scraped.sum = value;
      else if (suffix === '_count') scraped.count = value;
    }
    if (scraped.buckets.size > 0) out.set(key, scraped);
  }
  return out;
}

function quantile(bounds: number[], counts: number[], q: number): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (c > 0 && seen + c >= rank) {
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      const upper = Number.isFinite(bounds[i]!) ? bounds[i]! : lower;
      return lower + (upper - lower) * ((rank - seen) / c);
    }
    seen += c;
  }
  return bounds[bounds.length - 2] ?? 0;
}

/** The histogram over the test: after minus before; quantiles interpolated within buckets (approximate). */
export function histogramBetween(before: Scraped | undefined, after: Scraped | undefined): ServerHistogram | null {
  if (after === undefined) return null;
  const count = after.count - (before?.count ?? 0);
  if (count <= 0) return null;
  const bounds = [...after.buckets.keys()].sort((a, b) => a - b);
  let previous = 0;
  const counts = bounds.map((le) => {
    const cumulative = after.buckets.get(le)! - (before?.buckets.get(le) ?? 0);
    const c = cumulative - previous;
    previous = cumulative;
    return Math.max(0, c);
  });
  const ms = (seconds: number): number => Math.round(seconds * 1e6) / 1e3;
  return {
    count,
    p50Ms: ms(quantile(bounds, counts, 0.5)),
    p99Ms: ms(quantile(bounds, counts, 0.99)),
    meanMs: ms((after.sum - (before?.sum ?? 0)) / count),
  };
}

/** GET the metrics text; an Error with a reason a person can act on. */
export async function scrapeMetrics(url: string, token: string): Promise<Scrape> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (res.status === 401) throw new Error('401 from /metrics: check --metrics-token (the server METRICS_TOKEN)');
  if (res.status === 404) throw new Error('404 from /metrics: metrics are off on the server (set METRICS_TOKEN)');
  if (!res.ok) throw new Error(`${res.status} from /metrics`);
  return parseResidence(await res.text());
}

export function serverFiguresBetween(metricsUrl: string, before: Scrape, after: Scrape): ServerFigures {
  const figures: ServerFigures = {
    metricsUrl,
    callerToProviderMs: histogramBetween(before.get('in'), after.get('in')),
    providerToCallerMs: histogramBetween(before.get('out'), after.get('out')),
    appendWaitMs: histogramBetween(before.get('wait'), after.get('wait')),
  };
  if (after.size === 0) figures.error = 'the server exports no relay residence histograms (an older Parley?)';
  return figures;
}

/** The summary's lines for the server's figures. */
export function serverText(s: ServerFigures | undefined): string {
  if (s === undefined) return '';
  const line = (name: string, h: ServerHistogram | null): string =>
    h === null
      ? `  ${name.padEnd(22)} (nothing timed)`
      : `  ${name.padEnd(22)} p50 ${h.p50Ms.toFixed(3).padStart(8)} ms   p99 ${h.p99Ms.toFixed(3).padStart(8)} ms   mean ${h.meanMs.toFixed(3).padStart(8)} ms   (n=${h.count})`;
  if (s.error !== undefined && s.callerToProviderMs === null) return `\nserver (${s.metricsUrl}): ${s.error}`;
  return [
    '',
    `server: time Parley held each audio frame (${s.metricsUrl}; compare with the round trip above)`,
    line('caller -> provider', s.callerToProviderMs),
    line('provider -> caller', s.providerToCallerMs),
    line('coalescing wait', s.appendWaitMs),
  ].join('\n');
}
