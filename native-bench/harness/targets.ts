/** The targets, evaluated from one run's figures (ratios measured on this machine, in this run). */
import type { HttpResult } from '../http/scenario.js';
import type { VoiceResult } from '../voice/scenario.js';
import { fmt } from './stats.js';

export interface TargetCheck {
  target: string;
  goal: string;
  measured: string;
  /** null: not measurable in this run (the thing it measures is skipped). */
  met: boolean | null;
}

export function evaluateTargets(voice: VoiceResult | undefined, http: HttpResult | undefined): TargetCheck[] {
  const runs = voice?.runs ?? [];
  const parley = runs.filter((r) => r.relay === 'parley' && r.status === 'ok');
  const wsAt = (n: number) => runs.find((r) => r.relay === 'ws-relay' && r.sessions === n && r.status === 'ok');
  const checks: TargetCheck[] = [];
  const parleyReason = runs.find((r) => r.relay === 'parley' && r.status !== 'ok')?.reason ?? 'voice scenario not run';

  const worstCpu = parley.reduce((m, r) => Math.max(m, r.cpuMsPerSessionSecond ?? 0), 0);
  checks.push({
    target: 'Voice relay CPU',
    goal: '<= 0.8 ms server CPU per session-second',
    measured: parley.length === 0 ? `not measured: ${parleyReason}` : `${fmt(worstCpu, 3)} ms (worst N)`,
    met: parley.length === 0 ? null : worstCpu <= 0.8,
  });
  const ratios = parley.flatMap((r) => {
    const ws = wsAt(r.sessions);
    return ws?.cpuMsPerSessionSecond && r.cpuMsPerSessionSecond ? [ws.cpuMsPerSessionSecond / r.cpuMsPerSessionSecond] : [];
  });
  checks.push({
    target: 'Voice relay CPU vs ws baseline',
    goal: '>= 2x less CPU than ws-relay at the same N',
    measured: ratios.length === 0 ? `not measured: ${parleyReason}` : `${fmt(Math.min(...ratios), 2)}x (worst N)`,
    met: ratios.length === 0 ? null : Math.min(...ratios) >= 2,
  });
  const at200 = parley.find((r) => r.sessions === 200);
  checks.push({
    target: 'Relay-added latency',
    goal: 'p99 <= 2 ms at 200 sessions',
    measured: at200?.addedP99Ms === undefined ? `not measured: ${parley.length === 0 ? parleyReason : 'no run at N=200'}` : `${fmt(at200.addedP99Ms, 2)} ms`,
    met: at200?.addedP99Ms === undefined ? null : at200.addedP99Ms <= 2,
  });
  const worstRss = parley.reduce((m, r) => Math.max(m, r.rssPerSessionKb ?? 0), 0);
  checks.push({
    target: 'Server RSS per session',
    goal: '<= 40 KB per active session beyond the empty process',
    measured: parley.length === 0 ? `not measured: ${parleyReason}` : `${fmt(worstRss, 1)} KB (worst N)`,
    met: parley.length === 0 ? null : worstRss <= 40,
  });
  const get = http?.runs.find((r) => r.target === 'parley-assistant-get');
  checks.push({
    target: 'Authenticated GET',
    goal: '>= 50% of bare uWS hello requests per second',
    measured: get?.ratioToUws === undefined ? `not measured: ${get?.reason ?? http?.reason ?? 'HTTP scenario not run'}` : `${fmt(get.ratioToUws * 100, 1)}%`,
    met: get?.ratioToUws === undefined ? null : get.ratioToUws >= 0.5,
  });
  return checks;
}
