/** The issue's targets, evaluated from one run's figures (ratios measured on this machine, in this run). */
import type { HttpResult } from '../http/scenario.js';
import type { VoiceResult, VoiceSummary } from '../voice/scenario.js';
import { fmt } from './stats.js';

export interface TargetCheck {
  target: string;
  goal: string;
  measured: string;
  /** null: not measurable in this run (the thing it measures is skipped). */
  met: boolean | null;
}

/**
 * Voice targets (relay-core issue), on medians over interleaved rounds:
 * - echo shape = passthrough (Parley with VOICE_PROVIDER_APPEND_MS=0): CPU <= 1.10x uws-relay at every N, added p99
 *   <= 2 ms at N=200, largest N held >= uws-relay's;
 * - realistic shape = Parley's default configuration: <= 0.8 ms CPU per session-second at N >= 200 and >= 2x less
 *   than ws-relay at the same N;
 * - marginal RSS (least-squares slope over the run's N values) <= 40 KB per session.
 */
export function evaluateTargets(voice: VoiceResult | undefined, http: HttpResult | undefined): TargetCheck[] {
  const summaries = voice?.summaries ?? [];
  const parley = (shape: string): VoiceSummary[] => summaries.filter((r) => r.relay === 'parley' && r.shape === shape && r.status === 'ok');
  const parleyReason = summaries.find((r) => r.relay === 'parley' && r.status !== 'ok')?.reason ?? 'voice scenario not run';
  const checks: TargetCheck[] = [];
  const notMeasured = (why: string): Pick<TargetCheck, 'measured' | 'met'> => ({ measured: `not measured: ${why}`, met: null });

  const echo = parley('echo');
  const vsUws = echo.filter((r) => r.cpuVsUws !== undefined);
  const worstUws = vsUws.reduce<VoiceSummary | undefined>((w, r) => (w === undefined || r.cpuVsUws!.median > w.cpuVsUws!.median ? r : w), undefined);
  checks.push({
    target: 'Passthrough CPU vs uws-relay',
    goal: '<= 1.10x uws-relay CPU per session-second at every N (echo, APPEND_MS=0)',
    ...(worstUws === undefined
      ? notMeasured(echo.length === 0 ? parleyReason : 'no uws-relay run')
      : {
          measured: `${fmt(worstUws.cpuVsUws!.median, 2)}x at N=${worstUws.sessions} (worst; per N: ${vsUws.map((r) => `${r.sessions}: ${fmt(r.cpuVsUws!.median, 2)}x`).join(', ')})`,
          met: worstUws.cpuVsUws!.median <= 1.1,
        }),
  });
  const at200 = echo.find((r) => r.sessions === 200);
  checks.push({
    target: 'Relay-added latency',
    goal: 'p99 <= 2 ms at 200 sessions (echo, paired with direct per round)',
    ...(at200?.addedP99Ms === undefined
      ? notMeasured(echo.length === 0 ? parleyReason : 'no run at N=200')
      : { measured: `${fmt(at200.addedP99Ms, 2)} ms [${fmt(at200.addedP99?.min, 2)}–${fmt(at200.addedP99?.max, 2)}]`, met: at200.addedP99Ms <= 2 }),
  });
  const heldEcho = voice?.maxHeld.echo;
  checks.push({
    target: 'Largest N held',
    goal: ">= uws-relay's (0 drops, p99 < 20 ms; echo)",
    ...(heldEcho?.parley === undefined || heldEcho['uws-relay'] === undefined
      ? notMeasured(echo.length === 0 ? parleyReason : 'uws-relay not run')
      : { measured: `parley ${heldEcho.parley ?? 'none'}, uws-relay ${heldEcho['uws-relay'] ?? 'none'}`, met: (heldEcho.parley ?? 0) >= (heldEcho['uws-relay'] ?? 0) }),
  });

  const real = parley('realistic').filter((r) => r.sessions >= 200);
  const worstCpu = real.reduce((m, r) => Math.max(m, r.cpuMsPerSessionSecond ?? 0), 0);
  checks.push({
    target: 'Voice relay CPU (default config)',
    goal: '<= 0.8 ms server CPU per session-second at N >= 200 (realistic shape)',
    ...(real.length === 0
      ? notMeasured(parley('realistic').length === 0 ? `${parleyReason} (or realistic shape not run)` : 'no N >= 200')
      : { measured: `${fmt(worstCpu, 3)} ms (worst N >= 200)`, met: worstCpu <= 0.8 }),
  });
  const vsWs = real.filter((r) => r.cpuVsWs !== undefined);
  const worstWs = vsWs.reduce((m, r) => Math.max(m, r.cpuVsWs!.median), 0);
  checks.push({
    target: 'Voice relay CPU vs ws-relay',
    goal: '>= 2x less CPU than ws-relay at the same N >= 200 (realistic shape)',
    ...(vsWs.length === 0
      ? notMeasured('no ws-relay / realistic run at N >= 200')
      : { measured: `${fmt(1 / worstWs, 2)}x less (worst N)`, met: 1 / worstWs >= 2 }),
  });
  const slopes = (voice?.rssSlopes ?? []).filter((s) => s.relay === 'parley');
  const worstSlope = slopes.reduce((m, s) => Math.max(m, s.kbPerSession), Number.NEGATIVE_INFINITY);
  checks.push({
    target: 'Marginal RSS per session',
    goal: '<= 40 KB (least-squares slope of RSS against N)',
    ...(slopes.length === 0
      ? notMeasured('needs two or more N values')
      : { measured: `${slopes.map((s) => `${s.shape} ${fmt(s.kbPerSession, 1)} KB`).join(', ')}`, met: worstSlope <= 40 }),
  });
  const healthz = http?.runs.find((r) => r.target === 'parley-healthz');
  const get = http?.runs.find((r) => r.target === 'parley-assistant-get');
  const notRun = (run: typeof get) => `not measured: ${run?.reason ?? http?.reason ?? 'HTTP scenario not run'}`;
  const range = (r: [number, number] | undefined) => (r ? ` [${fmt(r[0], 2)}–${fmt(r[1], 2)}]` : '');
  checks.push({
    target: 'HTTP shell (GET /healthz)',
    goal: '>= 0.80x bare uWS hello req/s (same round)',
    measured: healthz?.ratioToUws === undefined ? notRun(healthz) : `${fmt(healthz.ratioToUws, 2)}x${range(healthz.ratioToUwsRange)}; by CPU/req ${fmt(healthz.cpuRatioToUws, 2)}x`,
    met: healthz?.ratioToUws === undefined ? null : healthz.ratioToUws >= 0.8,
  });
  checks.push({
    target: 'Authenticated GET vs floor',
    goal: '>= 0.80x bare uWS + postgres.js, same SELECT (same round)',
    measured: get?.ratioToFloor === undefined ? notRun(get) : `${fmt(get.ratioToFloor, 2)}x${range(get.ratioToFloorRange)}; by CPU/req ${fmt(get.cpuRatioToFloor, 2)}x`,
    met: get?.ratioToFloor === undefined ? null : get.ratioToFloor >= 0.8,
  });
  checks.push({
    target: 'Authenticated GET vs peer',
    goal: '>= 2x Fastify + postgres.js + Redis limiter (same round)',
    measured: get?.ratioToPeer === undefined ? notRun(get) : `${fmt(get.ratioToPeer, 2)}x${range(get.ratioToPeerRange)}; by CPU/req ${fmt(get.cpuRatioToPeer, 2)}x`,
    met: get?.ratioToPeer === undefined ? null : get.ratioToPeer >= 2,
  });
  return checks;
}
