/** The issue's targets, evaluated from one run's figures (ratios measured on this machine, in this run). */
import type { HttpResult } from '../http/scenario.js';
import type { VoiceResult, VoiceSummary } from '../voice/scenario.js';
import { relayLatencyTargets } from './latency-targets.js';
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
 * - echo shape (Parley's default: a frame goes at once while the provider link keeps up): CPU <= 1.10x uws-relay at
 *   every N, added p99
 *   <= 2 ms at N=200, largest N held >= uws-relay's;
 * - realistic shape = Parley's default configuration: <= 0.8 ms CPU per session-second at N >= 200 and >= 2x less
 *   than ws-relay at the same N;
 * - marginal RSS (least-squares slope over the run's N values) <= 40 KB per session.
 *
 * A (shape, implementation, N) whose load side was saturated (over 1% of frames not back within a second, or the
 * generator over 200 ms late) does not count for a CPU or latency target: a starved server relays its backlog in
 * batches and drops what is late, so its CPU per session-second and its latency describe the machine. Such a target
 * says "not measured" with the reason instead of a verdict.
 */
const MAX_DROP_RATE = 0.01;
const MAX_GENERATOR_LAG_MS = 200;

export function loadSideOk(r: VoiceSummary | undefined): boolean {
  if (r === undefined || r.status !== 'ok') return false;
  return (
    (r.framesDropped ?? 0) <= MAX_DROP_RATE * (r.framesSent ?? 0) &&
    (r.generatorMaxLagMs ?? Infinity) <= MAX_GENERATOR_LAG_MS
  );
}
export function evaluateTargets(voice: VoiceResult | undefined, http: HttpResult | undefined): TargetCheck[] {
  const summaries = voice?.summaries ?? [];
  const parley = (shape: string): VoiceSummary[] =>
    summaries.filter((r) => r.relay === 'parley' && r.shape === shape && r.status === 'ok');
  const parleyReason =
    summaries.find((r) => r.relay === 'parley' && r.status !== 'ok')?.reason ?? 'voice scenario not run';
  const checks: TargetCheck[] = [];
  const notMeasured = (why: string): Pick<TargetCheck, 'measured' | 'met'> => ({
    measured: `not measured: ${why}`,
    met: null,
  });

  const at = (shape: string, relay: string, n: number): VoiceSummary | undefined =>
    summaries.find((r) => r.shape === shape && r.relay === relay && r.sessions === n);
  const saturatedNote = (rows: VoiceSummary[]): string => {
    const bad = rows.filter((r) => !loadSideOk(r)).map((r) => r.sessions);
    return bad.length === 0
      ? ''
      : `; N=${bad.join(',')} left out: load side saturated (drops > 1% or generator > 200 ms late)`;
  };
  const allEcho = parley('echo');
  const echo = allEcho.filter(
    (r) =>
      loadSideOk(r) && loadSideOk(at('echo', 'uws-relay', r.sessions)) && loadSideOk(at('echo', 'direct', r.sessions)),
  );
  const vsUws = echo.filter((r) => r.cpuVsUws !== undefined);
  const worstUws = vsUws.reduce<VoiceSummary | undefined>(
    (w, r) => (w === undefined || r.cpuVsUws!.median > w.cpuVsUws!.median ? r : w),
    undefined,
  );
  checks.push({
    target: 'Passthrough CPU vs uws-relay',
    goal: '<= 1.10x uws-relay CPU per session-second at every N (echo, default config)',
    ...(worstUws === undefined
      ? notMeasured(
          allEcho.length === 0
            ? parleyReason
            : `no N where Parley, uws-relay and direct ran unsaturated${saturatedNote(allEcho)}`,
        )
      : {
          measured: `${fmt(worstUws.cpuVsUws!.median, 2)}x at N=${worstUws.sessions} (worst; per N: ${vsUws.map((r) => `${r.sessions}: ${fmt(r.cpuVsUws!.median, 2)}x`).join(', ')})${saturatedNote(allEcho)}`,
          met: worstUws.cpuVsUws!.median <= 1.1,
        }),
  });
  const at200 = echo.find((r) => r.sessions === 200);
  checks.push({
    target: 'Relay-added latency',
    goal: 'p99 <= 2 ms at 200 sessions (echo, paired with direct per round)',
    ...(at200?.addedP99Ms === undefined
      ? notMeasured(
          allEcho.length === 0
            ? parleyReason
            : allEcho.some((r) => r.sessions === 200)
              ? 'N=200 ran with a saturated load side'
              : 'no run at N=200',
        )
      : {
          measured: `${fmt(at200.addedP99Ms, 2)} ms [${fmt(at200.addedP99?.min, 2)}–${fmt(at200.addedP99?.max, 2)}]`,
          met: at200.addedP99Ms <= 2,
        }),
  });
  const heldEcho = voice?.maxHeld.echo;
  checks.push({
    target: 'Largest N held',
    goal: ">= uws-relay's (0 drops, p99 < 20 ms; echo)",
    ...(heldEcho?.parley === undefined || heldEcho['uws-relay'] === undefined
      ? notMeasured(allEcho.length === 0 ? parleyReason : 'uws-relay not run')
      : heldEcho.parley === null && heldEcho['uws-relay'] === null
        ? notMeasured('neither held any N of the run (on a saturated machine no implementation does)')
        : {
            measured: `parley ${heldEcho.parley ?? 'none'}, uws-relay ${heldEcho['uws-relay'] ?? 'none'}`,
            met: (heldEcho.parley ?? 0) >= (heldEcho['uws-relay'] ?? 0),
          }),
  });

  const allReal = parley('realistic').filter((r) => r.sessions >= 200);
  const real = allReal.filter((r) => loadSideOk(r));
  const worstCpu = real.reduce((m, r) => Math.max(m, r.cpuMsPerSessionSecond ?? 0), 0);
  checks.push({
    target: 'Voice relay CPU (default config)',
    goal: '<= 0.8 ms server CPU per session-second at N >= 200 (realistic shape)',
    ...(real.length === 0
      ? notMeasured(
          parley('realistic').length === 0
            ? `${parleyReason} (or realistic shape not run)`
            : allReal.length === 0
              ? 'no N >= 200'
              : `every N >= 200 ran saturated (measured ${allReal.map((r) => `${r.sessions}: ${fmt(r.cpuMsPerSessionSecond, 3)} ms`).join(', ')})`,
        )
      : { measured: `${fmt(worstCpu, 3)} ms (worst N >= 200)${saturatedNote(allReal)}`, met: worstCpu <= 0.8 }),
  });
  const vsWs = real.filter((r) => r.cpuVsWs !== undefined && loadSideOk(at('realistic', 'ws-relay', r.sessions)));
  const worstWs = vsWs.reduce((m, r) => Math.max(m, r.cpuVsWs!.median), 0);
  checks.push({
    target: 'Voice relay CPU vs ws-relay',
    goal: '>= 2x less CPU than ws-relay at the same N >= 200 (realistic shape)',
    ...(vsWs.length === 0
      ? notMeasured(
          `no unsaturated Parley + ws-relay pair at N >= 200 in the realistic shape${allReal.length > 0 ? ` (measured ${allReal.map((r) => `${r.sessions}: ${r.cpuVsWs === undefined ? '–' : fmt(1 / r.cpuVsWs.median, 2)}x less`).join(', ')})` : ''}`,
        )
      : { measured: `${fmt(1 / worstWs, 2)}x less (worst N)`, met: 1 / worstWs >= 2 }),
  });
  const slopes = (voice?.rssSlopes ?? []).filter((s) => s.relay === 'parley');
  const worstSlope = slopes.reduce((m, s) => Math.max(m, s.kbPerSession), Number.NEGATIVE_INFINITY);
  checks.push({
    target: 'Marginal RSS per session',
    goal: '<= 40 KB (least-squares slope of RSS against N)',
    ...(slopes.length === 0
      ? notMeasured('needs two or more N values')
      : {
          measured:
            `${slopes.map((s) => `${s.shape} ${fmt(s.kbPerSession, 1)} KB${s.parts ? ` (young generation ${fmt(s.parts.young, 1)}, rest of V8 ${fmt(s.parts.restOfV8, 1)}, outside V8 ${fmt(s.parts.outsideV8, 1)})` : ''}`).join(', ')}` +
            (allEcho.some((r) => !loadSideOk(r))
              ? ' (includes saturated runs: backlogs waiting in socket buffers count too)'
              : ''),
          met: worstSlope <= 40,
        }),
  });
  checks.push(...relayLatencyTargets(summaries, loadSideOk));
  const healthz = http?.runs.find((r) => r.target === 'parley-healthz');
  const get = http?.runs.find((r) => r.target === 'parley-assistant-get');
  const notRun = (run: typeof get) => `not measured: ${run?.reason ?? http?.reason ?? 'HTTP scenario not run'}`;
  const range = (r: [number, number] | undefined) => (r ? ` [${fmt(r[0], 2)}–${fmt(r[1], 2)}]` : '');
  checks.push({
    target: 'HTTP shell (GET /healthz)',
    goal: '>= 0.80x bare uWS hello req/s (same round)',
    measured:
      healthz?.ratioToUws === undefined
        ? notRun(healthz)
        : `${fmt(healthz.ratioToUws, 2)}x${range(healthz.ratioToUwsRange)}; by CPU/req ${fmt(healthz.cpuRatioToUws, 2)}x`,
    met: healthz?.ratioToUws === undefined ? null : healthz.ratioToUws >= 0.8,
  });
  checks.push({
    target: 'Authenticated GET vs floor',
    goal: '>= 0.80x bare uWS + postgres.js, same SELECT (same round)',
    measured:
      get?.ratioToFloor === undefined
        ? notRun(get)
        : `${fmt(get.ratioToFloor, 2)}x${range(get.ratioToFloorRange)}; by CPU/req ${fmt(get.cpuRatioToFloor, 2)}x`,
    met: get?.ratioToFloor === undefined ? null : get.ratioToFloor >= 0.8,
  });
  checks.push({
    target: 'Authenticated GET vs peer',
    goal: '>= 2x Fastify + postgres.js + Redis limiter (same round)',
    measured:
      get?.ratioToPeer === undefined
        ? notRun(get)
        : `${fmt(get.ratioToPeer, 2)}x${range(get.ratioToPeerRange)}; by CPU/req ${fmt(get.cpuRatioToPeer, 2)}x`,
    met: get?.ratioToPeer === undefined ? null : get.ratioToPeer >= 2,
  });
  return checks;
}
