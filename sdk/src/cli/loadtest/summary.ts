/** The plan printed before a run and the human summary printed after it. */
import type { LoadTestOptions } from './args.js';
import type { LatencySummary } from './stats.js';
import { LATENCY_LABELS, NO_ROUTE_KEY } from './labels.js';
import { callerBytesPerSecond, type LoadTestReport } from './run.js';

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function maskKey(key: string): string {
  return key.length <= 12 ? '****' : `${key.slice(0, 12)}…`;
}

/** What the run will send, so nobody starts a load test by accident. */
export function planText(o: LoadTestOptions, inputLabel: string): string {
  const callSeconds = o.durationMs / 1000;
  const voiceMinutes = (o.calls * callSeconds) / 60;
  const perCall = callerBytesPerSecond(o.audio);
  const upstream = (o.calls * perCall * 8) / 1_000_000;
  const format =
    o.audio === undefined || o.audio.format === 'pcm16'
      ? 'PCM16'
      : o.audio.format === 'pcmu'
        ? 'G.711 μ-law'
        : 'G.711 A-law';
  const rate = `${(o.audio?.sampleRateHz ?? 24000) / 1000} kHz`;
  const number = o.phone?.number;
  const lines = [
    `parley-loadtest plan`,
    `  target      ${o.url}  ${number !== undefined ? `the assistant of ${number}` : o.assistantId !== undefined ? `assistant ${o.assistantId}` : 'a temporary assistant (voice on, [sim:echo] for the simulator), deleted afterwards'}`,
    `  identity    ${o.apiKey !== undefined ? `API key ${maskKey(o.apiKey)}` : number !== undefined ? 'the carrier account of the number (signed requests)' : `keyless, Origin ${o.origin}${o.sign ? ', signed visitors' : ''}`}${o.recordingConsent ? ', recording consent sent' : ''}`,
    `  voice       ${o.calls} concurrent call${o.calls === 1 ? '' : 's'}, started over ${seconds(o.rampUpMs)}, held for ${seconds(o.durationMs)} in all` +
      (o.callMs !== undefined ? `, each hanging up and redialing every ${seconds(o.callMs)}` : ''),
    `  audio       ${inputLabel}, ${format} ${rate} in real time: ${(perCall / 1000).toFixed(0)} kB/s per call, ${upstream.toFixed(1)} Mbit/s up in all`,
    `  usage       up to ~${voiceMinutes.toFixed(1)} voice minutes will be metered against the assistant's account`,
  ];
  if (o.phone !== undefined)
    lines.push(
      `  phone       placed as a carrier places them (signed webhook, then the media stream) to ${o.phone.number ?? 'a temporary number on the assistant, deleted afterwards'}`,
    );
  if (o.chats > 0)
    lines.push(
      `  chat        ${o.chats} loop${o.chats === 1 ? '' : 's'} asking "${o.chatMessage}" back to back (each answer is metered)`,
    );
  lines.push(
    `  stops       after ${seconds(o.durationMs)} or on Ctrl-C (calls are ended cleanly; a second Ctrl-C quits at once)`,
  );
  return lines.join('\n');
}

/** Width of a figure's name: the longest label below fits. */
const NAME_WIDTH = 36;

/** Calls per instance: "1 instance" when only one answered, else each route key's count. */
export function instancesText(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return 'none';
  const calls = (n: number) => `${n} call${n === 1 ? '' : 's'}`;
  if (entries.length === 1) {
    const [key, n] = entries[0]!;
    return key === NO_ROUTE_KEY ? `1 instance: ${calls(n)}` : `${key}: ${n} (1 instance)`;
  }
  const each = entries.map(([k, v]) => `${k === NO_ROUTE_KEY ? 'no route key' : k}: ${v}`).join(', ');
  return `${each} (${entries.length} instances)`;
}

function latency(name: string, s: LatencySummary | null, note = ''): string {
  if (s === null) return `  ${name.padEnd(NAME_WIDTH)} -${note ? `  (${note})` : ''}`;
  return `  ${name.padEnd(NAME_WIDTH)} p50 ${s.p50.toFixed(0).padStart(6)} ms   p95 ${s.p95.toFixed(0).padStart(6)} ms   p99 ${s.p99.toFixed(0).padStart(6)} ms   max ${s.max.toFixed(0).padStart(6)} ms   (n=${s.count})`;
}

function tally(name: string, counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return `  ${name.padEnd(NAME_WIDTH)} ${entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k}: ${v}`).join(', ')}`;
}

const mb = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;

/** The report as text for a person. */
export function summaryText(r: LoadTestReport): string {
  const v = r.voice;
  const lines = [
    `parley-loadtest ${r.interrupted ? 'INTERRUPTED after' : 'finished in'} ${(r.elapsedMs / 1000).toFixed(1)} s: ${r.target.url} (${r.target.auth})`,
    `voice: ${v.connected}/${v.attempted} calls connected, peak ${v.peakConcurrent} at once, ${v.ended} ended`,
    latency(LATENCY_LABELS.mint, v.mintMs),
    latency(LATENCY_LABELS.connect, v.connectMs),
    latency(LATENCY_LABELS.firstAudio, v.firstAudioMs, 'none heard'),
    latency(
      LATENCY_LABELS.roundTrip,
      v.roundTripMs,
      'no echo: needs the simulator in echo mode, e.g. [sim:echo] in the assistant instructions',
    ),
    ...serverLines(v.server),
    tally('refusals', v.refusals),
    tally('end reasons', v.endReasons),
    `  ${'calls per instance'.padEnd(NAME_WIDTH)} ${instancesText(v.perInstance)}`,
    tally('errors', v.errors),
    `  ${'audio'.padEnd(NAME_WIDTH)} sent ${mb(v.audio.sentBytes)}, heard ${mb(v.audio.receivedBytes)}, dropped here ${mb(v.audio.droppedLocallyBytes)}, dropped by the service ${(v.audio.droppedByServerMs / 1000).toFixed(1)} s` +
      (v.audio.receivedWhileGateClosedBytes > 0
        ? `, ${mb(v.audio.receivedWhileGateClosedBytes)} arrived while the gate was closed (!)`
        : ''),
    `  ${'heartbeats'.padEnd(NAME_WIDTH)} ${v.heartbeats.sent} sent, ${v.heartbeats.failed} failed; send schedule late by up to ${v.audio.maxSendLagMs} ms` +
      (v.audio.maxSendLagMs > 100 ? ' (this machine could not keep up: results understate Parley)' : ''),
  ];
  if (r.chat !== null) {
    lines.push(
      `chat: ${r.chat.answered}/${r.chat.attempted} answered`,
      latency('answer', r.chat.latencyMs),
      latency('first token', r.chat.firstTokenMs),
      tally('refusals', r.chat.refusals),
      tally('errors', r.chat.errors),
    );
  }
  return lines.join('\n');
}

/** The service's own figures of the same calls, under what this tool heard. */
function serverLines(s: LoadTestReport['voice']['server']): string[] {
  if (s === null) return [];
  if (s.unavailable !== null) return [`  ${'server-side'.padEnd(NAME_WIDTH)} not read: ${s.unavailable}`];
  return [
    latency(LATENCY_LABELS.turn, s.turnLatencyMs, `no turns in ${s.calls} calls`),
    latency(LATENCY_LABELS.provider, s.providerFirstAudioMs, 'no turns'),
    latency(LATENCY_LABELS.relay, s.relayMs, 'no turns'),
  ];
}

/** One status line while running. */
export function progressText(
  p: {
    elapsedMs: number;
    totalMs: number;
    activeCalls: number;
    connected: number;
    refusals: number;
    errors: number;
    roundTripP50: number | undefined;
    chatsAnswered: number;
  },
  chats: boolean,
): string {
  return (
    `${(p.elapsedMs / 1000).toFixed(0).padStart(4)}/${(p.totalMs / 1000).toFixed(0)} s  active ${p.activeCalls}  connected ${p.connected}  ` +
    `refused ${p.refusals}  errors ${p.errors}` +
    (p.roundTripP50 !== undefined ? `  rtt p50 ${p.roundTripP50.toFixed(0)} ms` : '') +
    (chats ? `  chats ${p.chatsAnswered}` : '')
  );
}
