import { limitMicrosOf, type PlanEntitlements } from './plans.js';
import * as q from './queries.js';
import type { Meter } from './service.js';

/**
 * Operator primitives the admin capability composes inside its own transaction (with its audit row). They take
 * the transaction scope `tx` so the change and its audit record commit together.
 */

/** Adds credit to the account's current period (rolled forward first if it ended). Returns before/after. */
export async function addPeriodCredit(
  meter: Meter,
  tx: q.Queryable,
  accountId: string,
  creditMicros: number,
): Promise<{ periodStart: Date; before: number; after: number }> {
  const locked = await meter.lock(tx, accountId);
  await q.adjustBalance(tx, accountId, locked.period.start, { creditMicros });
  return {
    periodStart: locked.period.start,
    before: locked.balance.creditMicros,
    after: locked.balance.creditMicros + creditMicros,
  };
}

export async function listPlanEntitlements(meter: Meter): Promise<PlanEntitlements[]> {
  return q.listPlans(meter.sql);
}

export type PlanPatch = Partial<Omit<PlanEntitlements, 'planCode'>>;

/** Updates one plan row, row-locked; returns the row before and after (undefined when there is no such plan). */
export async function updatePlanEntitlements(
  tx: q.Queryable,
  planCode: string,
  patch: PlanPatch,
): Promise<{ before: PlanEntitlements; after: PlanEntitlements } | undefined> {
  const before = await q.lockPlan(tx, planCode);
  if (!before) return undefined;
  const after = await q.writePlan(tx, { ...before, ...patch });
  return { before, after };
}

export { limitMicrosOf };
