import type { Meter } from '../metering/index.js';
import type { VoiceQuota } from '../voice/index.js';
import type { Metrics } from './metrics.js';

/** Count the meter's reservations (chat, ingestion, eval) and settlements; the meter works as before. */
export function observeMeter(meter: Meter, metrics: Metrics): Meter {
  const admit = meter.admit.bind(meter);
  const settle = meter.settle.bind(meter);
  meter.admit = async (request) => {
    try {
      const reservation = await admit(request);
      metrics.reservation(request.kind, 'reserved');
      return reservation;
    } catch (err) {
      metrics.reservation(
        request.kind,
        (err as { status?: number }).status !== undefined && (err as { status: number }).status < 500
          ? 'refused'
          : 'failed',
      );
      throw err;
    }
  };
  meter.settle = async (reservation, usage) => {
    const outcome = await settle(reservation, usage);
    metrics.settlement(typeof reservation === 'string' ? 'unknown' : reservation.kind);
    return outcome;
  };
  return meter;
}

/** Count voice grants at admission and the one settlement per call. */
export function observeVoiceQuota<Q extends VoiceQuota>(quota: Q, metrics: Metrics): Q {
  return Object.assign(Object.create(quota) as Q, {
    admit: async (request: Parameters<VoiceQuota['admit']>[0]) => {
      try {
        await quota.admit(request);
        metrics.reservation('voice', 'reserved');
      } catch (err) {
        metrics.reservation(
          'voice',
          (err as { status?: number }).status !== undefined && (err as { status: number }).status < 500
            ? 'refused'
            : 'failed',
        );
        throw err;
      }
    },
    settle: async (request: Parameters<VoiceQuota['settle']>[0], seconds: number, finalized: boolean) => {
      await quota.settle(request, seconds, finalized);
      metrics.settlement('voice');
    },
  });
}
