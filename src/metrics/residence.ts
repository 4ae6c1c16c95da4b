import type { Registry } from 'prom-client';
import { RESIDENCE_BUCKETS, type RelayResidence, type ResidenceHistogram } from '../providers/voice/index.js';

/**
 * The relay's residence histograms in Prometheus form, built at scrape time from the bucket arrays the relay fills
 * (src/providers/voice/residence.ts): nothing runs per frame here. Two metrics:
 * - `parley_voice_relay_residence_seconds{direction}`: the time Parley spends working on a frame, from reading it on
 *   one side to handing it to the other side's socket (`caller_to_provider`, `provider_to_caller`);
 * - `parley_voice_relay_append_wait_seconds`: the time a caller frame waits, staged, for the provider link to
 *   drain (at most VOICE_PROVIDER_APPEND_MS; 0 when sent at once), apart from the working time.
 */
interface HistogramSample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

function samples(name: string, labels: Record<string, string>, h: ResidenceHistogram, out: HistogramSample[]): void {
  let cumulative = 0;
  for (let i = 0; i < RESIDENCE_BUCKETS.length; i++) {
    cumulative += h.counts[i]!;
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: RESIDENCE_BUCKETS[i]! }, value: cumulative });
  }
  cumulative += h.counts[RESIDENCE_BUCKETS.length]!;
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
  out.push({ metricName: `${name}_sum`, labels, value: h.sumSeconds });
  out.push({ metricName: `${name}_count`, labels, value: h.count });
}

function histogramMetric(
  name: string,
  help: string,
  read: (r: RelayResidence, out: HistogramSample[]) => void,
  source: () => RelayResidence | undefined,
) {
  const get = () => {
    const values: HistogramSample[] = [];
    const residence = source();
    if (residence !== undefined) read(residence, values);
    return { name, help, type: 'histogram', values, aggregator: 'sum' };
  };
  return { name, help, type: 'histogram', aggregator: 'sum', get, reset: () => {} };
}

/** Register both residence histograms on `registry`, read from whatever `source` returns at scrape time. */
export function registerResidence(registry: Registry, source: () => RelayResidence | undefined): void {
  const work = 'parley_voice_relay_residence_seconds';
  const wait = 'parley_voice_relay_append_wait_seconds';
  const metrics = [
    histogramMetric(
      work,
      'Time the relay works on an audio frame: read on one side to handed to the other side socket, by direction (coalescing waits excluded).',
      (r, out) => {
        samples(work, { direction: 'caller_to_provider' }, r.callerToProvider, out);
        samples(work, { direction: 'provider_to_caller' }, r.providerToCaller, out);
      },
      source,
    ),
    histogramMetric(
      wait,
      'Time a caller audio frame waited, staged, for the provider link to drain (at most VOICE_PROVIDER_APPEND_MS; 0 when sent at once).',
      (r, out) => samples(wait, {}, r.appendWindow, out),
      source,
    ),
  ];
  // A collector shaped like prom-client's own metrics (name, help, type, get): registered as one.
  for (const metric of metrics) registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}
