/**
 * A hand-written SVG: server CPU per session-second (left) and round-trip p99 (right) against concurrent sessions,
 * one line per implementation. Sessions are spaced evenly (categorical axis) so small and large N stay readable.
 */
import type { VoiceSummary } from '../voice/scenario.js';
import type { RelayName } from '../voice/implementations.js';

/** What the chart plots: medians over the rounds of one traffic shape. */
type VoiceRun = Pick<VoiceSummary, 'relay' | 'sessions' | 'status' | 'cpuMsPerSessionSecond' | 'rttP99Ms'>;

const COLORS: Record<string, string> = {
  parley: '#1b9e4b',
  'uws-relay': '#2c6fbb',
  'ws-relay': '#d9730d',
  direct: '#888888',
};
const W = 900;
const H = 410;
const PANEL = { w: 380, h: 260, top: 80 };

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const pow = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * pow >= value) return step * pow;
  return 10 * pow;
}

function panel(
  x0: number,
  title: string,
  unit: string,
  runs: VoiceRun[],
  pick: (r: VoiceRun) => number | undefined,
  relays: RelayName[],
  sessions: number[],
): string {
  const points = relays.map((relay) => ({
    relay,
    values: sessions.map((n) => {
      const run = runs.find((r) => r.relay === relay && r.sessions === n && r.status === 'ok');
      const v = run === undefined ? undefined : pick(run);
      return v === undefined || !Number.isFinite(v) ? undefined : v;
    }),
  }));
  const max = niceMax(
    Math.max(0, ...points.flatMap((p) => p.values.filter((v): v is number => v !== undefined))) * 1.05,
  );
  const x = (i: number): number =>
    x0 + 50 + (sessions.length === 1 ? (PANEL.w - 70) / 2 : (i * (PANEL.w - 70)) / (sessions.length - 1));
  const y = (v: number): number => PANEL.top + PANEL.h - (v / max) * PANEL.h;
  const out: string[] = [
    `<text x="${x0 + 50}" y="${PANEL.top - 20}" font-size="14" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let t = 0; t <= 4; t++) {
    const v = (max * t) / 4;
    out.push(`<line x1="${x0 + 50}" x2="${x0 + PANEL.w - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${x0 + 44}" y="${y(v) + 4}" font-size="11" text-anchor="end">${+v.toPrecision(3)}</text>`);
  }
  out.push(
    `<text x="${x0 + 12}" y="${PANEL.top + PANEL.h / 2}" font-size="11" transform="rotate(-90 ${x0 + 12} ${PANEL.top + PANEL.h / 2})" text-anchor="middle">${esc(unit)}</text>`,
  );
  sessions.forEach((n, i) =>
    out.push(`<text x="${x(i)}" y="${PANEL.top + PANEL.h + 16}" font-size="11" text-anchor="middle">${n}</text>`),
  );
  out.push(
    `<text x="${x0 + 50 + (PANEL.w - 70) / 2}" y="${PANEL.top + PANEL.h + 34}" font-size="11" text-anchor="middle">concurrent sessions</text>`,
  );
  for (const { relay, values } of points) {
    const color = COLORS[relay];
    const segments: string[] = [];
    values.forEach((v, i) => {
      if (v === undefined) return;
      segments.push(
        `${segments.length === 0 || values[i - 1] === undefined ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`,
      );
      out.push(
        `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3.5" fill="${color}"><title>${relay} N=${sessions[i]}: ${v}</title></circle>`,
      );
    });
    if (segments.length > 1)
      out.push(`<path d="${segments.join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`);
  }
  return out.join('\n');
}

export function renderChart(runs: VoiceRun[], subtitle: string): string {
  const sessions = [...new Set(runs.map((r) => r.sessions))].sort((a, b) => a - b);
  const present = (['parley', 'uws-relay', 'ws-relay', 'direct'] as RelayName[]).filter((relay) =>
    runs.some((r) => r.relay === relay && r.status === 'ok'),
  );
  const legend = present
    .map(
      (relay, i) =>
        `<rect x="${60 + i * 200}" y="${H - 22}" width="14" height="4" fill="${COLORS[relay]}"/><text x="${80 + i * 200}" y="${H - 16}" font-size="12">${relay === 'direct' ? 'direct (no relay, floor)' : relay}</text>`,
    )
    .join('\n');
  const skipped = (['parley', 'uws-relay', 'ws-relay'] as RelayName[]).filter((relay) => !present.includes(relay));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif">
<rect width="${W}" height="${H}" fill="#ffffff"/>
<text x="20" y="22" font-size="15" font-weight="bold">Voice relay: 20 ms frames, echo simulator</text>
<text x="20" y="40" font-size="11" fill="#555">${esc(subtitle)}${skipped.length > 0 ? esc(` — not measured: ${skipped.join(', ')}`) : ''}</text>
${panel(
  0,
  'Server CPU per session-second (lower is better)',
  'ms CPU / session-s',
  runs,
  (r) => r.cpuMsPerSessionSecond,
  present.filter((p) => p !== 'direct'),
  sessions,
)}
${panel(450, 'Round-trip p99 at the caller (lower is better)', 'ms', runs, (r) => r.rttP99Ms, present, sessions)}
${legend}
</svg>
`;
}
