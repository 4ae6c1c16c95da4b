/** A clock the meter, the sweeper and the period logic read; tests pass their own. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface Period {
  start: Date;
  end: Date;
}

/**
 * `date` plus `months` calendar months in UTC, the day clamped to the target month's last day and the time of
 * day kept (Jan 31 + 1 month = Feb 28/29). Always computed from the anchor, so periods never drift.
 */
export function addMonthsUtc(date: Date, months: number): Date {
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth() + months;
  const targetYear = y + Math.floor(m / 12);
  const targetMonth = ((m % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      targetYear,
      targetMonth,
      Math.min(date.getUTCDate(), lastDay),
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
      date.getUTCMilliseconds(),
    ),
  );
}

/** The monthly period counted from `anchor` that contains `now` (anchor <= now assumed; earlier works too). */
export function periodContaining(anchor: Date, now: Date): Period {
  let k = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  while (addMonthsUtc(anchor, k) > now) k--;
  while (addMonthsUtc(anchor, k + 1) <= now) k++;
  return { start: addMonthsUtc(anchor, k), end: addMonthsUtc(anchor, k + 1) };
}

/**
 * The period an account is in at `now`. The stored period holds until its end; after that the next period is
 * counted monthly from the anchor (the subscription's period start when billing set one, else the stored start),
 * and never begins before the stored period ended. Returns undefined when the stored period still holds.
 */
export function nextPeriod(stored: Period, anchor: Date | null, now: Date): Period | undefined {
  if (now < stored.end) return undefined;
  const counted = periodContaining(anchor ?? stored.start, now);
  if (counted.start < stored.end)
    return { start: stored.end, end: counted.end > stored.end ? counted.end : addMonthsUtc(stored.end, 1) };
  return counted;
}
