/** A self-contained HTML report (inline SVG charts, no scripts, no external assets) a person can open and share. */
import type { LoadTestReport } from './run.js';
import type { LatencySummary } from './stats.js';
import { LATENCY_LABELS } from './labels.js';

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Grouped bars: p50 / p95 / p99 of each latency that has samples. */
function latencyChart(rows: Array<[string, LatencySummary | null]>): string {
  const present = rows.filter((r): r is [string, LatencySummary] => r[1] !== null);
  if (present.length === 0) return '<p>No latency samples.</p>';
  const width = 720;
  const rowHeight = 54;
  const left = 170;
  const height = present.length * rowHeight + 30;
  const max = Math.max(...present.map(([, s]) => s.p99), 1);
  const scale = (v: number) => ((width - left - 120) * v) / max;
  const colors = { p50: '#2f7d32', p95: '#f0a020', p99: '#c62828' };
  const bars = present
    .map(([name, s], i) => {
      const y = 10 + i * rowHeight;
      const bar = (key: 'p50' | 'p95' | 'p99', dy: number) =>
        `<rect x="${left}" y="${y + dy}" width="${scale(s[key]).toFixed(1)}" height="13" fill="${colors[key]}"><title>${key} ${s[key]} ms</title></rect>` +
        `<text x="${(left + scale(s[key]) + 6).toFixed(1)}" y="${y + dy + 11}" font-size="11">${key} ${s[key].toFixed(0)} ms</text>`;
      return `<text x="0" y="${y + 26}" font-size="13">${esc(name)}</text>${bar('p50', 0)}${bar('p95', 15)}${bar('p99', 30)}`;
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="latency percentiles">${bars}</svg>`;
}

/** Active calls over time (and the round trip's p50 per second when the echo was measured). */
function timelineChart(r: LoadTestReport): string {
  const points = r.timeline;
  if (points.length < 2) return '<p>Too short for a timeline.</p>';
  const width = 720;
  const height = 220;
  const pad = { left: 40, right: 50, top: 10, bottom: 30 };
  const tMax = Math.max(...points.map((p) => p.t), 1);
  const aMax = Math.max(...points.map((p) => p.activeCalls), 1);
  const rtts = points.map((p) => p.roundTripP50).filter((v): v is number => v !== null);
  const rMax = Math.max(...rtts, 1);
  const x = (t: number) => pad.left + ((width - pad.left - pad.right) * t) / tMax;
  const y = (v: number, max: number) => height - pad.bottom - ((height - pad.top - pad.bottom) * v) / max;
  const active = points.map((p) => `${x(p.t).toFixed(1)},${y(p.activeCalls, aMax).toFixed(1)}`).join(' ');
  const rtt = points
    .filter((p) => p.roundTripP50 !== null)
    .map((p) => `${x(p.t).toFixed(1)},${y(p.roundTripP50!, rMax).toFixed(1)}`)
    .join(' ');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="active calls over time">` +
    `<line x1="${pad.left}" y1="${height - pad.bottom}" x2="${width - pad.right}" y2="${height - pad.bottom}" stroke="#888"/>` +
    `<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${height - pad.bottom}" stroke="#888"/>` +
    `<text x="${pad.left}" y="${height - 8}" font-size="11">0 s</text><text x="${width - pad.right - 20}" y="${height - 8}" font-size="11">${tMax} s</text>` +
    `<text x="2" y="${pad.top + 10}" font-size="11" fill="#1565c0">${aMax}</text>` +
    `<polyline fill="none" stroke="#1565c0" stroke-width="2" points="${active}"><title>active calls</title></polyline>` +
    (rtt
      ? `<polyline fill="none" stroke="#c62828" stroke-width="1.5" stroke-dasharray="4 3" points="${rtt}"><title>round trip p50</title></polyline>` +
        `<text x="${width - pad.right + 4}" y="${pad.top + 10}" font-size="11" fill="#c62828">${rMax.toFixed(0)} ms</text>`
      : '') +
    `</svg><p class="legend"><span style="color:#1565c0">━ active calls</span>${rtt ? ' <span style="color:#c62828">┅ round trip p50 (right axis)</span>' : ''}</p>`
  );
}

function table(title: string, counts: Record<string, number>): string {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return (
    `<h3>${esc(title)}</h3>` +
    (rows.length === 0
      ? '<p>none</p>'
      : `<table>${rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('')}</table>`)
  );
}

export function reportHtml(r: LoadTestReport, summary: string): string {
  const v = r.voice;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Parley load test ${esc(r.startedAt)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:800px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:2em}
h3{font-size:14px}table{border-collapse:collapse}td{border-bottom:1px solid #ddd;padding:2px 12px 2px 0}pre{background:#f6f6f6;padding:1em;overflow:auto;white-space:pre-wrap}
.bad{color:#c62828;font-weight:bold}.legend{font-size:12px}</style></head><body>
<h1>Parley load test: ${esc(r.target.url)}</h1>
<p>${esc(r.startedAt)} for ${(r.elapsedMs / 1000).toFixed(1)} s${r.interrupted ? ' <span class="bad">(interrupted)</span>' : ''};
${r.plan.calls} voice callers${r.plan.chats ? `, ${r.plan.chats} chat loops` : ''}, ramp-up ${r.plan.rampUpMs / 1000} s, input ${esc(r.plan.input)}, ${r.target.auth}.</p>
<p>Voice: ${v.connected}/${v.attempted} calls connected, peak ${v.peakConcurrent} at once.${v.echoDetected ? '' : ' No echo came back, so no round trip was measured.'}</p>
<h2>Latency</h2>
${latencyChart([
  [LATENCY_LABELS.mint, v.mintMs],
  [LATENCY_LABELS.connect, v.connectMs],
  [LATENCY_LABELS.firstAudio, v.firstAudioMs],
  [LATENCY_LABELS.roundTrip, v.roundTripMs],
  ...(v.server !== null
    ? ([
        [LATENCY_LABELS.turn, v.server.turnLatencyMs],
        [LATENCY_LABELS.provider, v.server.providerFirstAudioMs],
        [LATENCY_LABELS.relay, v.server.relayMs],
      ] as Array<[string, LatencySummary | null]>)
    : []),
  ...(r.chat
    ? ([
        ['chat answer', r.chat.latencyMs],
        ['chat first token', r.chat.firstTokenMs],
      ] as Array<[string, LatencySummary | null]>)
    : []),
])}
<h2>Over time</h2>
${timelineChart(r)}
<h2>Outcomes</h2>
${table('Refusals (status, reason)', v.refusals)}
${table('End reasons', v.endReasons)}
${table('Errors', v.errors)}
${r.chat ? table('Chat refusals', r.chat.refusals) + table('Chat errors', r.chat.errors) : ''}
<h2>Summary</h2>
<pre>${esc(summary)}</pre>
</body></html>
`;
}
