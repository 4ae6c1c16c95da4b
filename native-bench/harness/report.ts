/** The run's record (results/latest.json), the console table and RESULTS.md. */
import { residenceCell } from '../voice/residence.js';
import type { HttpResult } from '../http/scenario.js';
import { usageLines } from '../usage/scenario.js';
import type { UsageResult } from '../usage/scenario.js';
import type { PhoneBenchResult } from '../phone/scenario.js';
import type { Spread, VoiceResult, VoiceSummary } from '../voice/scenario.js';
import type { CpuPlan, MachineInfo } from './machine.js';
import { fmt } from './stats.js';
import type { TargetCheck } from './targets.js';

export interface BenchResults {
  schema: 1;
  startedAt: string;
  durationSeconds: number;
  mode: 'quick' | 'full';
  argv: string[];
  machine: MachineInfo;
  cpuPlan: CpuPlan;
  /** 1-minute load average before and after the run: other work on the machine skews every figure. */
  loadAverage: { before: number; after: number };
  parley: { kind: string; note: string } | { unavailable: string };
  voice?: VoiceResult & {
    settings: {
      sessions: number[];
      shapes: string[];
      rounds: number;
      warmupMs: number;
      measureMs: number;
      drainMs: number;
      workers: number;
      frameMs: number;
    };
  };
  http?: HttpResult & { seconds: number };
  usage?: UsageResult;
  /** --only=phone: phone calls against WebSocket calls in one run, and the barge-in clear latency. */
  phone?: PhoneBenchResult;
  targets: TargetCheck[];
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)];
}

/** `median [min–max]`. */
function withRange(sp: Spread | undefined, digits: number): string {
  if (sp === undefined) return '–';
  return sp.min === sp.max
    ? fmt(sp.median, digits)
    : `${fmt(sp.median, digits)} [${fmt(sp.min, digits)}–${fmt(sp.max, digits)}]`;
}

/**
 * A ratio of paired rounds, flagged when its spread is larger than the difference it shows (half the range of the
 * per-round ratios exceeds |median - 1|): such a ratio does not tell the two apart.
 */
function ratioCell(sp: Spread | undefined): string {
  if (sp === undefined) return '';
  const noisy = (sp.max - sp.min) / 2 > Math.abs(sp.median - 1);
  return `${withRange(sp, 2)}x${noisy ? ' ~noise' : ''}`;
}

/** An added latency, flagged when its spread over the rounds is larger than the value itself. */
function addedCell(sp: Spread | undefined): string {
  if (sp === undefined) return '–';
  const noisy = (sp.max - sp.min) / 2 > Math.abs(sp.median);
  return `${withRange(sp, 2)}${noisy ? ' ~noise' : ''}`;
}

function voiceRows(summaries: VoiceSummary[]): string[][] {
  return summaries.map((r) =>
    r.status !== 'ok'
      ? [
          r.shape,
          r.relay,
          String(r.sessions),
          r.status,
          '',
          '',
          '',
          '',
          '',
          '',
          '',
          '',
          '',
          (r.reason ?? '').slice(0, 110),
        ]
      : [
          r.shape,
          r.relay,
          String(r.sessions),
          `${r.rounds}`,
          r.relay === 'direct' ? '(no server)' : withRange(r.cpu, 3),
          ratioCell(r.cpuVsUws),
          ratioCell(r.cpuVsWs),
          withRange(r.rttP99, 2),
          addedCell(r.addedP99),
          residenceCell(r.residence),
          r.relay === 'direct' ? '' : fmt(r.rssLoadedMb, 1),
          r.relay === 'direct' ? '' : fmt(r.heapPerSessionKb, 1),
          `${r.framesDropped}/${r.framesSent}`,
          `gen lag ${fmt(r.generatorMaxLagMs, 0)} ms, gen ${fmt(r.generatorCpuMsPerS, 0)} / sim ${fmt(r.simulatorCpuMsPerS, 0)} ms CPU/s` +
            (r.eldP99Ms !== undefined ? `, loop delay p99 ${fmt(r.eldP99Ms, 1)} / max ${fmt(r.eldMaxMs, 1)} ms` : '') +
            `${r.socketsClosedEarly ? `, ${r.socketsClosedEarly} closed early` : ''}${r.connected !== r.sessions ? `, ${r.connected} connected` : ''}${r.reason ? `; ${r.reason}` : ''}`,
        ],
  );
}

const VOICE_HEADER = [
  'shape',
  'impl',
  'N',
  'rounds',
  'CPU ms/session-s median [range]',
  'CPU vs uws-relay',
  'CPU vs ws-relay',
  'RTT p99 ms',
  'added p99 ms',
  'relay residence ms p50/p99 (working; wait: coalescing)',
  'RSS MB',
  'heap KB/session',
  'dropped/sent',
  'notes',
];

function voiceBlock(voice: NonNullable<BenchResults['voice']>, bold: boolean): string[] {
  const b = (text: string): string => (bold ? `**${text}**` : text);
  const held = Object.entries(voice.maxHeld).map(
    ([shape, relays]) =>
      `${shape}: ${Object.entries(relays ?? {})
        .map(([k, v]) => `${b(k)} ${v ?? 'none'}`)
        .join(', ')}`,
  );
  const slopes =
    voice.rssSlopes.length === 0
      ? ['RSS slope: needs at least two N values in the run']
      : [
          `RSS slope (least squares of RSS against N, KB per session; in parts: V8 young generation + rest of V8's heap + outside V8's heap): ${voice.rssSlopes
            .map(
              (s) =>
                `${s.shape} ${b(s.relay)} ${fmt(s.kbPerSession, 1)}${s.parts ? ` (${fmt(s.parts.young, 1)} + ${fmt(s.parts.restOfV8, 1)} + ${fmt(s.parts.outsideV8, 1)})` : ''}`,
            )
            .join(', ')}`,
        ];
  return [
    ...table(VOICE_HEADER, voiceRows(voice.summaries)),
    '',
    `Medians over ${voice.settings.rounds} interleaved round(s); [min–max] over the rounds. "vs" columns are per-round ratios (same round, same N), ` +
      '"~noise" where half their range is larger than the difference from 1x (or, for added p99, than the value): those cells do not separate the two.',
    `Largest N held (0 drops, RTT p99 median < 20 ms): ${held.join('; ')} (only the N values of this run were tried).`,
    ...slopes,
  ];
}

const HTTP_HEADER = [
  'target',
  'status',
  'req/s (median)',
  'p50 ms',
  'p99 ms',
  'server CPU µs/req',
  'x bare uWS [min–max]',
  'errors / notes',
];

function httpRows(http: HttpResult): string[][] {
  return http.runs.map((r) =>
    r.status !== 'ok'
      ? [r.label, r.status, '', '', '', '', '', (r.reason ?? '').slice(0, 110)]
      : [
          r.label,
          'ok',
          fmt(r.requestsPerSecond, 0),
          fmt(r.p50Ms, 2),
          fmt(r.p99Ms, 2),
          fmt(r.cpuUsPerRequest, 1),
          `${fmt(r.ratioToUws, 3)}${r.ratioToUwsRange ? ` [${fmt(r.ratioToUwsRange[0], 2)}–${fmt(r.ratioToUwsRange[1], 2)}]` : ''}`,
          [
            `${r.errors ?? 0} errors, ${r.connections} conns`,
            ...(r.ratioToFloor !== undefined
              ? [
                  `${fmt(r.ratioToFloor, 2)}x floor [${fmt(r.ratioToFloorRange?.[0], 2)}–${fmt(r.ratioToFloorRange?.[1], 2)}]`,
                ]
              : []),
            ...(r.ratioToPeer !== undefined
              ? [
                  `${fmt(r.ratioToPeer, 2)}x peer [${fmt(r.ratioToPeerRange?.[0], 2)}–${fmt(r.ratioToPeerRange?.[1], 2)}]`,
                ]
              : []),
          ].join('; '),
        ],
  );
}

function targetRows(targets: TargetCheck[]): string[][] {
  return targets.map((t) => [
    t.target,
    t.goal,
    t.measured.slice(0, 120),
    t.met === null ? 'not measured' : t.met ? 'met' : 'NOT met',
  ]);
}

export function consoleReport(results: BenchResults): string {
  const out: string[] = [
    '',
    `native-bench (${results.mode}) — ${results.machine.cpuCount} x ${results.machine.cpuModel}, node ${results.machine.node}, ` +
      `commit ${results.machine.commit.slice(0, 10)}${results.machine.dirty ? ' (+ uncommitted changes)' : ''}, ${results.durationSeconds} s`,
    `pinning: ${results.cpuPlan.note}`,
    `load average (1 min): ${results.loadAverage.before} before, ${results.loadAverage.after} after${results.loadAverage.before > results.machine.cpuCount / 2 ? '  <- the machine was busy: treat the figures as noisy' : ''}`,
  ];
  if (results.voice) out.push('', 'Voice relay', ...voiceBlock(results.voice, false));
  if (results.http)
    out.push(
      '',
      'HTTP',
      ...(results.http.status === 'skipped'
        ? [results.http.reason ?? 'skipped']
        : table(HTTP_HEADER, httpRows(results.http))),
    );
  if (results.usage) out.push('', 'Usage (dashboard)', ...usageLines(results.usage, table));
  out.push('', 'Targets', ...table(['target', 'goal', 'measured', 'status'], targetRows(results.targets)), '');
  return out.join('\n');
}

export function resultsMarkdown(results: BenchResults, intro: string): string {
  const m = results.machine;
  const lines: string[] = [
    ...(intro.trim() === '' ? [] : [intro.trimEnd(), '']),
    '## Latest run (generated)',
    '',
    `- When: ${results.startedAt} (${results.mode} mode, ${results.durationSeconds} s, \`${['npm run bench', ...(results.argv.length > 0 ? ['--', ...results.argv] : [])].join(' ')}\`)`,
    `- Machine: ${m.cpuCount} x ${m.cpuModel}, ${m.memoryGb} GB RAM, ${m.platform} ${m.kernel}`,
    `- Node ${m.node}; commit \`${m.commit}\`${m.dirty ? ' plus uncommitted changes in the working tree' : ''}`,
    `- Pinning: ${results.cpuPlan.note}`,
    `- Load average (1 min) before / after the run: ${results.loadAverage.before} / ${results.loadAverage.after}` +
      (results.loadAverage.before > m.cpuCount / 2
        ? ' — other work was running on this machine, so the absolute figures are noisy; the ratios within the run are the reliable part'
        : ''),
    `- Parley: ${'unavailable' in results.parley ? `unavailable (${results.parley.unavailable})` : results.parley.note}`,
  ];
  if (results.voice) {
    const s = results.voice.settings;
    lines.push(
      `- Voice: shapes ${s.shapes.join(', ')}; ${s.rounds} interleaved round(s) of ${s.warmupMs / 1000} s warm-up + ${s.measureMs / 1000} s measured per (implementation, N), ` +
        `each on a fresh server; ${s.workers} load worker thread(s); ${s.frameMs} ms caller frames (960 B, 50/s per caller)`,
      '',
      '![CPU per session-second and round-trip p99 against concurrent sessions](results/chart.svg)',
      '',
      '### Voice relay',
      '',
      ...voiceBlock(results.voice, true),
    );
  }
  if (results.http) {
    lines.push('', '### HTTP', '');
    if (results.http.status === 'skipped') lines.push(results.http.reason ?? 'skipped');
    else
      lines.push(
        `wrk, ${results.http.wrk?.threads ?? 1} thread(s), ${results.http.seconds} s per target per round, ${results.http.rounds ?? 1} interleaved round(s), 64 connections (mint: 8). Ratios are per round (same round), median [min–max].`,
        '',
        ...table(HTTP_HEADER, httpRows(results.http)),
      );
  }
  lines.push(
    '',
    '### Targets',
    '',
    ...table(['target', 'goal', 'measured', 'status'], targetRows(results.targets)),
    '',
  );
  return lines.join('\n');
}
