import { getVoiceLatency, type VoiceLatency } from '@parley/sdk';
import { v1 } from '../api/client.js';
import { Empty, Loaded, Table, useLoad } from './components.js';
import { count } from './format.js';

const DAYS = 7;

/**
 * An assistant's voice turns over the last seven days: per day, the turn latency (end of the caller's speech to the
 * first answer audio) and the provider's time to first audio, each as a p95 bar with its p50 inside. A picture,
 * with a table twin for exact values and screen readers.
 */
export function VoiceLatencyChart({ assistantId }: { assistantId: string }) {
  const load = useLoad(() => getVoiceLatency(v1, assistantId, DAYS), [assistantId]);
  return (
    <section aria-labelledby="lat-h">
      <h3 id="lat-h">Voice turn latency, last 7 days</h3>
      <Loaded load={load} label="Loading voice latency…">
        {(latency) => (latency.days.length === 0 ? <NoTurns /> : <Chart latency={latency} />)}
      </Loaded>
    </section>
  );
}

function NoTurns() {
  return (
    <Empty>
      <p>No voice turns in the last 7 days.</p>
    </Empty>
  );
}

function lastDays(): string[] {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  return Array.from({ length: DAYS }, (_, i) =>
    new Date(today - (DAYS - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

function Chart({ latency }: { latency: VoiceLatency }) {
  const days = lastDays();
  const byDay = new Map(latency.days.map((d) => [d.day, d]));
  const max = Math.max(...latency.days.map((d) => Math.max(d.latencyP95Ms, d.firstAudioP95Ms)), 1);
  const w = 640;
  const h = 150;
  const slot = w / DAYS;
  const bar = slot / 3;
  const y = (v: number) => h - (v / max) * (h - 6);
  return (
    <figure class="chart latency-chart">
      <figcaption>Turn latency and time to first audio (p95 bars, p50 inside)</figcaption>
      <div class="chart-max" aria-hidden="true">
        {Math.round(max)} ms
      </div>
      <svg viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={summaryOf(latency)}>
        <line x1={0} y1={h} x2={w} y2={h} class="axis" />
        {days.map((day, i) => {
          const d = byDay.get(day);
          if (!d) return null;
          const x = i * slot + slot / 6;
          return (
            <g>
              <rect x={x} y={y(d.latencyP95Ms)} width={bar} height={h - y(d.latencyP95Ms)} class="lat-p95">
                <title>{`${day}: turn latency p95 ${Math.round(d.latencyP95Ms)} ms (${count(d.turns, 'turn')})`}</title>
              </rect>
              <rect x={x} y={y(d.latencyP50Ms)} width={bar} height={h - y(d.latencyP50Ms)} class="lat-p50">
                <title>{`${day}: turn latency p50 ${Math.round(d.latencyP50Ms)} ms`}</title>
              </rect>
              <rect
                x={x + bar + 2}
                y={y(d.firstAudioP95Ms)}
                width={bar}
                height={h - y(d.firstAudioP95Ms)}
                class="tfa-p95"
              >
                <title>{`${day}: time to first audio p95 ${Math.round(d.firstAudioP95Ms)} ms`}</title>
              </rect>
              <rect
                x={x + bar + 2}
                y={y(d.firstAudioP50Ms)}
                width={bar}
                height={h - y(d.firstAudioP50Ms)}
                class="tfa-p50"
              >
                <title>{`${day}: time to first audio p50 ${Math.round(d.firstAudioP50Ms)} ms`}</title>
              </rect>
            </g>
          );
        })}
      </svg>
      <div class="chart-axis" aria-hidden="true">
        <span>{days[0]}</span>
        <span>{days[DAYS - 1]}</span>
      </div>
      <ul class="tl-legend small" aria-label="Series">
        <li>
          <span class="tl-swatch lat-p50" aria-hidden="true" /> Turn latency
        </li>
        <li>
          <span class="tl-swatch tfa-p50" aria-hidden="true" /> Provider's time to first audio
        </li>
      </ul>
      <details>
        <summary>Show as a table</summary>
        <Table columns={['Day', 'Turns', 'Latency p50', 'Latency p95', 'First audio p50', 'First audio p95']}>
          {latency.days.map((d) => (
            <tr>
              <td>{d.day}</td>
              <td>{d.turns}</td>
              <td>{Math.round(d.latencyP50Ms)} ms</td>
              <td>{Math.round(d.latencyP95Ms)} ms</td>
              <td>{Math.round(d.firstAudioP50Ms)} ms</td>
              <td>{Math.round(d.firstAudioP95Ms)} ms</td>
            </tr>
          ))}
        </Table>
      </details>
    </figure>
  );
}

function summaryOf(latency: VoiceLatency): string {
  const turns = latency.days.reduce((n, d) => n + d.turns, 0);
  const worst = Math.max(...latency.days.map((d) => d.latencyP95Ms));
  return `Voice turn latency over 7 days: ${count(turns, 'turn')}, worst daily p95 ${Math.round(worst)} ms`;
}
