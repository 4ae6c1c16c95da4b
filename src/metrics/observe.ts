import type { Meter } from '../metering/index.js';
import type { VoiceQuota } from '../voice/index.js';
import type { Metrics } from './metrics.js';

/** Count the meter's reservations (chat, ingestion, eval) and settlements; the meter works as before. */
export function observeMeter(meter: Meter, metrics: Metrics): Meter {
  const admit = meter.admit.bind(meter);
  const settle = meter.settle.bind(meter);
  meter.admit = async (...args: Parameters<Meter['admit']>) => {
    const [request] = args;
    try {
      const reservation = await admit(...args);
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
  // Every argument passes through: a settle inside the caller's transaction (`within`) must stay in it. Dropping it
  // ran the settle on the pool instead, which on the one-connection embedded database waited forever for the
  // connection its own transaction held.
  meter.settle = async (...args: Parameters<Meter['settle']>) => {
    const [reservation] = args;
    const outcome = await settle(...args);
    metrics.settlement(typeof reservation === 'string' ? 'unknown' : reservation.kind);
    return outcome;
  };
  return meter;
}

/** Count voice grants at admission and the one settlement per call. */
export function observeVoiceQuota<Q extends VoiceQuota>(quota: Q, metrics: Metrics): Q {
  return Object.assign(Object.create(quota) as Q, {
    admit: async (...args: Parameters<VoiceQuota['admit']>) => {
      try {
        await quota.admit(...args);
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
    settle: async (...args: Parameters<VoiceQuota['settle']>) => {
      await quota.settle(...args);
      metrics.settlement('voice');
    },
  });
}
