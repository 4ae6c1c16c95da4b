import type { Meter } from './service.js';
import * as q from './queries.js';

export interface SweepResult {
  expired: number;
}

/**
 * Releases reservations left open longer than HOSTED_USAGE_RECONCILE_STALE_MINUTES (a crash between reserve and
 * settle): their held micros and voice seconds go back to the balance and each gets its one `expired` usage event.
 * Each reservation closes in its own transaction through the same guarded path as release, so a settle racing
 * the sweeper wins or loses cleanly, never twice. Safe to run on every instance at once.
 */
export async function sweepStaleReservations(meter: Meter, options: { batchSize?: number } = {}): Promise<SweepResult> {
  if (meter.mode === 'off') return { expired: 0 };
  const before = new Date(meter.clock.now().getTime() - meter.config.HOSTED_USAGE_RECONCILE_STALE_MINUTES * 60_000);
  const batch = options.batchSize ?? 500;
  let expired = 0;
  for (;;) {
    const ids = await q.listStaleReservationIds(meter.sql, before, batch);
    for (const id of ids) if (await meter.close(id, 'expired')) expired++;
    if (ids.length < batch) break;
  }
  if (expired > 0) meter.log.warn({ expired }, 'stale usage reservations released');
  return { expired };
}

export interface UsageSweeper {
  /** Runs one sweep now (also what the timer does). */
  sweepNow(): Promise<SweepResult>;
  /** Stops the timer and waits for a running sweep. */
  stop(): Promise<void>;
}

/**
 * Starts the periodic sweeper (default every minute). Start it from the process lifecycle, never while the route
 * table is being built: collecting capabilities must do no I/O.
 */
export function startUsageSweeper(meter: Meter, options: { intervalMs?: number } = {}): UsageSweeper {
  const intervalMs = options.intervalMs ?? 60_000;
  let running: Promise<SweepResult> | undefined;
  const sweepNow = (): Promise<SweepResult> => {
    running ??= sweepStaleReservations(meter).finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = setInterval(() => {
    sweepNow().catch((err: unknown) => meter.log.error({ err }, 'usage sweep failed'));
  }, intervalMs);
  timer.unref();
  return {
    sweepNow,
    stop: async () => {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
