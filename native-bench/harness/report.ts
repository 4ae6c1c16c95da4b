/** The run's record (results/latest.json), the console table and RESULTS.md. */
import type { HttpResult } from '../http/scenario.js';
import type { VoiceResult, VoiceRun } from '../voice/scenario.js';
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
  voice?: VoiceResult & { settings: { sessions: number[]; warmupMs: number; measureMs: number; workers: number; frameMs: number } };
  http?: HttpResult & { seconds: number };
  targets: TargetCheck[];
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)];
}

function voiceRows(runs: VoiceRun[]): string[][] {
  return runs.map((r) =>
    r.status !== 'ok'
      ? [r.relay, String(r.sessions), r.status, '', '', '', '', '', '', '', (r.reason ?? '').slice(0, 110)]
      : [
          r.relay, String(r.sessions), `${r.connected}`,
          r.relay === 'direct' ? '(no server)' : fmt(r.cpuMsPerSessionSecond, 3),
          fmt(r.rttP50Ms, 2), fmt(r.rttP99Ms, 2), fmt(r.addedP50Ms, 2), fmt(r.addedP99Ms, 2),
          r.relay === 'direct' ? '' : fmt(r.rssPerSessionKb, 1),
          `${r.framesDropped}/${r.framesSent}`,
          `gen lag ${fmt(r.generatorMaxLagMs, 1)} ms, gen ${fmt(r.generatorCpuMsPerS, 0)} / sim ${fmt(r.simulatorCpuMsPerS, 0)} ms CPU/s${r.socketsClosedEarly ? `, ${r.socketsClosedEarly} closed early` : ''}${r.reason ? `; ${r.reason}` : ''}`,
        ],
  );
}

const VOICE_HEADER = ['impl', 'N', 'connected', 'CPU ms/session-s', 'RTT p50 ms', 'RTT p99 ms', 'added p50', 'added p99', 'RSS KB/session', 'dropped/sent', 'notes'];
const HTTP_HEADER = ['target', 'status', 'req/s', 'p50 ms', 'p99 ms', 'x bare uWS', 'errors / notes'];

function httpRows(http: HttpResult): string[][] {
  return http.runs.map((r) =>
    r.status !== 'ok'
      ? [r.label, r.status, '', '', '', '', (r.reason ?? '').slice(0, 110)]
      : [r.label, 'ok', fmt(r.requestsPerSecond, 0), fmt(r.p50Ms, 2), fmt(r.p99Ms, 2), fmt(r.ratioToUws, 3), `${r.errors ?? 0} errors, ${r.connections} conns`],
  );
}

function targetRows(targets: TargetCheck[]): string[][] {
  return targets.map((t) => [t.target, t.goal, t.measured.slice(0, 120), t.met === null ? 'not measured' : t.met ? 'met' : 'NOT met']);
}

export function consoleReport(results: BenchResults): string {
  const out: string[] = [
    '',
    `native-bench (${results.mode}) — ${results.machine.cpuCount} x ${results.machine.cpuModel}, node ${results.machine.node}, ` +
      `commit ${results.machine.commit.slice(0, 10)}${results.machine.dirty ? ' (+ uncommitted changes)' : ''}, ${results.durationSeconds} s`,
    `pinning: ${results.cpuPlan.note}`,
    `load average (1 min): ${results.loadAverage.before} before, ${results.loadAverage.after} after${results.loadAverage.before > results.machine.cpuCount / 2 ? '  <- the machine was busy: treat the figures as noisy' : ''}`,
  ];
  if (results.voice) out.push('', 'Voice relay', ...table(VOICE_HEADER, voiceRows(results.voice.runs)), `largest N held (0 drops, RTT p99 < 20 ms): ${Object.entries(results.voice.maxHeld).map(([k, v]) => `${k} ${v ?? 'none'}`).join(', ')}`);
  if (results.http) out.push('', 'HTTP', ...(results.http.status === 'skipped' ? [results.http.reason ?? 'skipped'] : table(HTTP_HEADER, httpRows(results.http))));
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
      (results.loadAverage.before > m.cpuCount / 2 ? ' — other work was running on this machine, so the absolute figures are noisy; the ratios within the run are the reliable part' : ''),
    `- Parley: ${'unavailable' in results.parley ? `unavailable (${results.parley.unavailable})` : results.parley.note}`,
  ];
  if (results.voice) {
    const s = results.voice.settings;
    lines.push(
      `- Voice: ${s.warmupMs / 1000} s warm-up + ${s.measureMs / 1000} s measured per (implementation, N); ${s.workers} load worker thread(s); ${s.frameMs} ms frames (960 B, 50/s per caller)`,
      '',
      '![CPU per session-second and round-trip p99 against concurrent sessions](results/chart.svg)',
      '',
      '### Voice relay',
      '',
      ...table(VOICE_HEADER, voiceRows(results.voice.runs)),
      '',
      `Largest N held with zero drops and round-trip p99 under 20 ms: ${Object.entries(results.voice.maxHeld).map(([k, v]) => `**${k}** ${v ?? 'none'}`).join(', ')}` +
        ' (only the N values of this run were tried).',
    );
  }
  if (results.http) {
    lines.push('', '### HTTP', '');
    if (results.http.status === 'skipped') lines.push(results.http.reason ?? 'skipped');
    else lines.push(`wrk, ${results.http.wrk?.threads ?? 1} thread(s), ${results.http.seconds} s per target, 64 connections (mint: 8).`, '', ...table(HTTP_HEADER, httpRows(results.http)));
  }
  lines.push('', '### Targets', '', ...table(['target', 'goal', 'measured', 'status'], targetRows(results.targets)), '');
  return lines.join('\n');
}
