/**
 * The relay-latency targets: the relay's working residence (read inside Parley, from /metrics) and the default
 * configuration's added round trip and CPU against the bare uWS relay (realistic shape, N=200), on one run's medians.
 */
import type { VoiceSummary } from '../voice/scenario.js';
import { fmt } from './stats.js';
import type { TargetCheck } from './targets.js';

/** `loadSideOk`: targets.ts's test of an unsaturated load side (passed in: no import cycle between the two). */
export function relayLatencyTargets(
  summaries: VoiceSummary[],
  loadSideOk: (r: VoiceSummary | undefined) => boolean,
): TargetCheck[] {
  const at = (shape: string, relay: string, n: number): VoiceSummary | undefined =>
    summaries.find((r) => r.shape === shape && r.relay === relay && r.sessions === n && r.status === 'ok');
  const checks: TargetCheck[] = [];

  // Residence is timed inside the server, so a saturated load side does not invalidate it (a starved server shows).
  const at400 = summaries.filter((r) => r.relay === 'parley' && r.sessions === 400 && r.residence !== undefined);
  const worst = (r: VoiceSummary): number => Math.max(r.residence!.inP99Ms, r.residence!.outP99Ms);
  checks.push({
    target: 'Relay working residence',
    goal: 'p99 <= 1 ms per direction at N=400 (read to handed to the other socket, coalescing wait apart)',
    ...(at400.length === 0
      ? { measured: 'not measured: no Parley run at N=400 with residence figures', met: null }
      : {
          measured: at400
            .map(
              (r) =>
                `${r.shape}: in ${fmt(r.residence!.inP99Ms, 3)} ms, out ${fmt(r.residence!.outP99Ms, 3)} ms` +
                (loadSideOk(r) ? '' : ' (load side saturated)'),
            )
            .join('; '),
          met: at400.every((r) => worst(r) <= 1),
        }),
  });

  // Server-side added time: working residence plus the coalescing wait (in) per direction, default configuration. The
  // sum of two quantiles bounds the quantile of the sum from above (approximately: bucketed).
  const realistic = summaries.filter(
    (r) => r.shape === 'realistic' && r.relay === 'parley' && r.residence !== undefined,
  );
  const added = (r: VoiceSummary, q: 'P50' | 'P99'): number =>
    Math.max(r.residence![`in${q}Ms`] + r.residence![`wait${q}Ms`], r.residence![`out${q}Ms`]);
  checks.push({
    target: 'Server-side added time',
    goal: 'p50 <= 2 ms and p99 <= 10 ms per direction (realistic shape, residence + coalescing wait, every N)',
    ...(realistic.length === 0
      ? { measured: 'not measured: no Parley run in the realistic shape with residence figures', met: null }
      : {
          measured: realistic
            .map((r) => `N=${r.sessions}: p50 ${fmt(added(r, 'P50'), 2)} ms, p99 ${fmt(added(r, 'P99'), 2)} ms`)
            .join('; '),
          met: realistic.every((r) => added(r, 'P50') <= 2 && added(r, 'P99') <= 10),
        }),
  });

  const parley = at('realistic', 'parley', 200);
  const direct = at('realistic', 'direct', 200);
  const uws = at('realistic', 'uws-relay', 200);
  const latencyOk = loadSideOk(parley) && loadSideOk(direct);
  checks.push({
    target: 'Relay-added round trip (default config)',
    goal: 'p50 <= 20 ms and p99 <= 40 ms at N=200 (realistic shape, paired with direct per round)',
    ...(parley?.addedP99Ms === undefined || parley.addedP50Ms === undefined
      ? { measured: 'not measured: no Parley and direct pair at N=200 in the realistic shape', met: null }
      : !latencyOk
        ? {
            measured: `not measured: load side saturated (p50 ${fmt(parley.addedP50Ms, 1)} ms, p99 ${fmt(parley.addedP99Ms, 1)} ms as read)`,
            met: null,
          }
        : {
            measured: `p50 ${fmt(parley.addedP50Ms, 1)} ms, p99 ${fmt(parley.addedP99Ms, 1)} ms [${fmt(parley.addedP99?.min, 1)}–${fmt(parley.addedP99?.max, 1)}]`,
            met: parley.addedP50Ms <= 20 && parley.addedP99Ms <= 40,
          }),
  });
  checks.push({
    target: 'Default CPU vs uws-relay',
    goal: "<= uws-relay's CPU per session-second at N=200 (realistic shape, same round)",
    ...(parley?.cpuVsUws === undefined
      ? { measured: 'not measured: no Parley and uws-relay pair at N=200 in the realistic shape', met: null }
      : !loadSideOk(parley) || !loadSideOk(uws)
        ? { measured: `not measured: load side saturated (${fmt(parley.cpuVsUws.median, 2)}x as read)`, met: null }
        : {
            measured: `${fmt(parley.cpuVsUws.median, 2)}x [${fmt(parley.cpuVsUws.min, 2)}–${fmt(parley.cpuVsUws.max, 2)}]`,
            met: parley.cpuVsUws.median <= 1,
          }),
  });
  return checks;
}
