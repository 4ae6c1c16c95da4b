/** The phone simulator's report as text for a person: per call, then in sum. */
import type { LatencySummary } from '../loadtest/stats.js';
import type { PhoneSimReport } from './run.js';

const ms = (v: number | null) => (v === null ? '-' : `${Math.round(v)} ms`);

function latency(name: string, s: LatencySummary | null, note = ''): string {
  if (s === null) return `  ${name.padEnd(22)} -${note ? `  (${note})` : ''}`;
  return `  ${name.padEnd(22)} p50 ${s.p50.toFixed(0).padStart(6)} ms   p95 ${s.p95.toFixed(0).padStart(6)} ms   max ${s.max.toFixed(0).padStart(6)} ms   (n=${s.count})`;
}

function tally(name: string, counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return `  ${name.padEnd(22)} ${entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k}: ${v}`).join(', ')}`;
}

export function phoneSummaryText(r: PhoneSimReport): string {
  const s = r.summary;
  const lines = [
    `phone-sim ${r.interrupted ? 'INTERRUPTED after' : 'finished in'} ${(r.elapsedMs / 1000).toFixed(1)} s: ${r.target.number} via ${r.target.voiceUrl}`,
    'calls:',
  ];
  for (const c of r.calls.slice(0, 50)) {
    lines.push(
      `  #${String(c.index + 1).padEnd(4)} ${c.answer.padEnd(7)} answer ${ms(c.answerMs).padStart(7)}  first audio ${ms(c.firstAudioMs).padStart(8)}  ` +
        `round trip ${c.roundTripMs === null ? '-' : `${Math.round(c.roundTripMs.p50)} ms`}  clears ${c.clears}  heard ${(c.receivedMs / 1000).toFixed(1)} s  ` +
        `end: ${c.endReason}${c.said.length > 0 ? `  said: "${c.said.join(' ')}"` : ''}${c.error !== null ? `  (${c.error})` : ''}`,
    );
  }
  if (r.calls.length > 50) lines.push(`  … and ${r.calls.length - 50} more (--json has them all)`);
  lines.push(
    `in sum: ${s.streamed}/${s.attempted} answered with a stream, ${s.rejected} rejected, ${s.refused} refused, ${s.failed} failed; peak ${s.peakConcurrent} on the line`,
    latency('answer (TwiML)', s.answerMs),
    latency('stream open', s.connectMs),
    latency('first assistant audio', s.firstAudioMs, 'none heard'),
    latency('round trip', s.roundTripMs, 'no echo: needs an echoing assistant, e.g. [sim:echo] with the simulator'),
    `  clears                 ${s.clears}`,
    tally('end reasons', s.endReasons),
    tally('errors', s.errors),
    `  audio                  sent ${(s.sentBytes / 8000).toFixed(1)} s, heard ${(s.receivedBytes / 8000).toFixed(1)} s; send schedule late by up to ${s.maxSendLagMs} ms`,
  );
  return lines.join('\n');
}
