import { getVoiceTimeline, type VoiceTimeline, type VoiceTimelineEvent } from '@parley/sdk';
import { v1 } from '../api/client.js';
import { Loaded, useLoad } from './components.js';
import { count } from './format.js';

/**
 * A call drawn as a picture: three lanes (caller, Parley, provider) on the call's time axis, with the caller's
 * presence, the provider link and the gate as bands, degraded periods shaded across the lanes, the turns marked,
 * and the end with whose fault it was; below it, each turn's latency as a bar split by part and coloured by owner.
 * Inline SVG with classes only (the dashboard's CSP allows no inline style); every mark has a <title>.
 */
export function CallTimelinePicture({ sessionId, label }: { sessionId: string; label: string }) {
  const load = useLoad(() => getVoiceTimeline(v1, sessionId), [sessionId]);
  return (
    <Loaded load={load} label="Loading the call's timeline…">
      {(timeline) => (
        <figure class="call-timeline" aria-label={`Timeline of ${label}`}>
          <TimelineLanes timeline={timeline} />
          <TurnBars timeline={timeline} />
          <figcaption class="muted small">{captionOf(timeline)}</figcaption>
        </figure>
      )}
    </Loaded>
  );
}

const W = 800;
const X0 = 78;
const PLOT = W - X0 - 10;
const LANES = [
  { id: 'caller', name: 'Caller', y: 14 },
  { id: 'parley', name: 'Parley', y: 54 },
  { id: 'provider', name: 'Provider', y: 94 },
] as const;
const LANE_H = 30;

const CALLER_EVENTS = new Set([
  'caller_connected',
  'caller_disconnected',
  'mute',
  'unmute',
  'replaced',
  'turn_started',
]);

function laneOf(event: VoiceTimelineEvent): (typeof LANES)[number] {
  if (CALLER_EVENTS.has(event.type) || ['dtmf', 'audio_dropped', 'frame_refused'].includes(event.type)) return LANES[0];
  if (event.type.startsWith('provider_')) return LANES[2];
  return LANES[1];
}

/** Spans between an opening event and its closing one (or the end of the call). */
function spans(
  events: VoiceTimelineEvent[],
  open: (e: VoiceTimelineEvent) => boolean,
  close: (e: VoiceTimelineEvent) => boolean,
  endMs: number,
) {
  const out: Array<{ from: number; to: number; by?: VoiceTimelineEvent }> = [];
  let from: number | undefined;
  let by: VoiceTimelineEvent | undefined;
  for (const e of events) {
    if (from === undefined && open(e)) {
      from = e.atMs;
      by = e;
    } else if (from !== undefined && close(e)) {
      out.push({ from, to: e.atMs, ...(by ? { by } : {}) });
      from = undefined;
    }
  }
  if (from !== undefined) out.push({ from, to: endMs, ...(by ? { by } : {}) });
  return out;
}

function durationOf(t: VoiceTimeline): number {
  const last = t.events.at(-1)?.atMs ?? 0;
  const ended = t.endedAt === null ? Date.now() : Date.parse(t.endedAt);
  return Math.max(last, ended - Date.parse(t.startedAt), 1);
}

function TimelineLanes({ timeline }: { timeline: VoiceTimeline }) {
  const endMs = durationOf(timeline);
  const x = (ms: number) => X0 + (Math.max(0, Math.min(ms, endMs)) / endMs) * PLOT;
  const w = (from: number, to: number) => Math.max(2, x(to) - x(from));
  const ev = timeline.events;
  const ended = ev.find((e) => e.type === 'ended')?.atMs ?? endMs;
  const present = spans(
    ev,
    (e) => e.type === 'caller_connected',
    (e) => e.type === 'caller_disconnected',
    ended,
  );
  const link = spans(
    ev,
    (e) => e.type === 'provider_connected' || e.type === 'provider_reconnected',
    (e) => e.type === 'provider_reconnecting' || e.type === 'provider_lost',
    ended,
  );
  const gateOpen = spans(
    ev,
    (e) => e.type === 'gate_opened',
    (e) => e.type === 'gate_closed',
    ended,
  );
  const degraded = spans(
    ev,
    (e) => e.type === 'degraded',
    (e) => e.type === 'recovered',
    ended,
  );
  const end = timeline.end;
  const ticks = [0, endMs / 2, endMs];
  return (
    <svg viewBox={`0 0 ${W} 170`} role="img" aria-label={laneSummary(timeline, present.length, degraded.length)}>
      {LANES.map((lane) => (
        <g>
          <rect x={X0} y={lane.y} width={PLOT} height={LANE_H} class="tl-lane" />
          <text x={4} y={lane.y + 19} class="tl-label">
            {lane.name}
          </text>
        </g>
      ))}
      {present.map((s) => (
        <rect x={x(s.from)} y={LANES[0].y + 8} width={w(s.from, s.to)} height={14} class="tl-present">
          <title>{`Caller connected ${secs(s.from)}–${secs(s.to)}`}</title>
        </rect>
      ))}
      {gateOpen.map((s) => (
        <rect x={x(s.from)} y={LANES[1].y + 8} width={w(s.from, s.to)} height={14} class="tl-gate-open">
          <title>{`Gate open (${String(s.by?.detail?.['reason'] ?? '')}) ${secs(s.from)}–${secs(s.to)}; shaded grey: closed`}</title>
        </rect>
      ))}
      {link.map((s) => (
        <rect x={x(s.from)} y={LANES[2].y + 8} width={w(s.from, s.to)} height={14} class="tl-link">
          <title>{`Provider link up ${secs(s.from)}–${secs(s.to)}`}</title>
        </rect>
      ))}
      {degraded.map((s) => (
        <rect
          x={x(s.from)}
          y={LANES[0].y - 4}
          width={w(s.from, s.to)}
          height={LANES[2].y + LANE_H - LANES[0].y + 8}
          class="tl-degraded"
        >
          <title>{`Degraded (${String(s.by?.detail?.['cause'] ?? '')}) ${secs(s.from)}–${secs(s.to)}`}</title>
        </rect>
      ))}
      {timeline.turns.map((turn) => (
        <rect
          x={x(turn.userStoppedAtMs)}
          y={LANES[1].y + 2}
          width={w(turn.userStoppedAtMs, turn.firstAudioAtMs)}
          height={LANE_H - 4}
          class="tl-turn"
        >
          <title>{`Turn ${turn.index}: ${ms(turn.latencyMs)} from the end of the caller's speech to the answer`}</title>
        </rect>
      ))}
      {ev.map((e) => {
        const lane = laneOf(e);
        return (
          <circle cx={x(e.atMs)} cy={lane.y + LANE_H / 2} r={3} class={`tl-event tl-ev-${e.type}`}>
            <title>{`${secs(e.atMs)} ${e.type.replace(/_/g, ' ')}${detailText(e)}`}</title>
          </circle>
        );
      })}
      {end && (
        <g class={`tl-end${end.fault === null ? '' : ' tl-fault'}`}>
          <line x1={x(ended)} y1={6} x2={x(ended)} y2={LANES[2].y + LANE_H + 4} />
          <text x={Math.min(x(ended), W - 4)} y={LANES[2].y + LANE_H + 18} text-anchor="end" class="tl-end-label">
            {endWords(end)}
          </text>
        </g>
      )}
      {ticks.map((t, i) => (
        <text x={x(t)} y={166} text-anchor={i === 0 ? 'start' : i === 2 ? 'end' : 'middle'} class="tl-tick">
          {secs(t)}
        </text>
      ))}
    </svg>
  );
}

const OWNER_WORDS: Record<string, string> = {
  relay: 'Parley relay',
  provider: 'Voice provider',
  platform: 'Parley platform (grounding)',
  owner: 'Your tools (your server)',
  caller: 'Caller',
};

function TurnBars({ timeline }: { timeline: VoiceTimeline }) {
  const turns = timeline.turns;
  if (turns.length === 0) return <p class="muted small">No turns yet: the caller has not spoken and been answered.</p>;
  const max = Math.max(...turns.map((t) => t.latencyMs), 1);
  const rowH = 18;
  const h = turns.length * rowH + 6;
  return (
    <>
      <svg
        viewBox={`0 0 ${W} ${h}`}
        role="img"
        aria-label={`Turn latency: ${turns.map((t) => `turn ${t.index} ${ms(t.latencyMs)}`).join(', ')}`}
        class="tl-turns"
      >
        {turns.map((turn, row) => {
          let at = 0;
          const y = row * rowH + 3;
          return (
            <g>
              <text x={4} y={y + 12} class="tl-label">
                {`Turn ${turn.index}`}
              </text>
              {turn.parts
                .filter((part) => part.ms > 0)
                .map((part) => {
                  const x = X0 + (at / max) * (PLOT - 70);
                  at += part.ms;
                  return (
                    <rect
                      x={x}
                      y={y}
                      width={Math.max(0.5, (part.ms / max) * (PLOT - 70))}
                      height={rowH - 4}
                      class={`tl-owner-${part.owner}`}
                    >
                      <title>{`${part.name.replace(/_/g, ' ')}: ${ms(part.ms)} (${OWNER_WORDS[part.owner] ?? part.owner})`}</title>
                    </rect>
                  );
                })}
              <text x={X0 + (turn.latencyMs / max) * (PLOT - 70) + 6} y={y + 12} class="tl-tick">
                {ms(turn.latencyMs)}
              </text>
            </g>
          );
        })}
      </svg>
      <ul class="tl-legend small" aria-label="Owners">
        {Object.entries(OWNER_WORDS).map(([owner, words]) => (
          <li>
            <span class={`tl-swatch tl-owner-${owner}`} aria-hidden="true" /> {words}
          </li>
        ))}
      </ul>
    </>
  );
}

function endWords(end: NonNullable<VoiceTimeline['end']>): string {
  const why = end.reason === null ? 'caller hung up' : end.reason.replace(/_/g, ' ');
  return `Ended: ${why} · fault: ${end.fault ?? 'none'}`;
}

function laneSummary(t: VoiceTimeline, joins: number, degraded: number): string {
  const end = t.end ? `; ${endWords(t.end)}` : '; still running';
  return `Call timeline over ${secs(durationOf(t))}: caller connected ${count(joins, 'time')}, ${count(t.turns.length, 'turn')}, ${count(degraded, 'degraded period')}${end}`;
}

function captionOf(t: VoiceTimeline): string {
  const s = t.summary;
  const latency = s.turns > 0 ? ` · turn latency p50 ${ms(s.latencyP50Ms ?? 0)}, p95 ${ms(s.latencyP95Ms ?? 0)}` : '';
  const omitted = t.eventsOmitted
    ? ` · ${t.eventsOmitted.count} events in the middle of the call are counted, not drawn`
    : '';
  return `${t.transport} · ${count(t.events.length, 'event')} · ${count(s.turns, 'turn')}${latency}${omitted}`;
}

function detailText(e: VoiceTimelineEvent): string {
  if (!e.detail) return '';
  return ` (${Object.entries(e.detail)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ')})`;
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}
