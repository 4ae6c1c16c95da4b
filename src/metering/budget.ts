import { writeAuditLog } from '../audit/index.js';
import type { TransactionSql } from '../db/index.js';
import * as bq from './budget-queries.js';
import { effectiveEntitlements, isPlanCode, type PlanEntitlements } from './plans.js';
import type { Queryable } from './queries.js';

/** Owner budget settings: thresholds (percent of the effective budget) and an optional hard limit. */
export interface BudgetSettings {
  alertThresholdsPercent: number[];
  hardLimitMicros: number | null;
}

export const DEFAULT_ALERT_THRESHOLDS = [50, 80, 100] as const;
export const MAX_ALERT_THRESHOLDS = 5;

/** Where the effective budget comes from: the plan, the operator's override, or the owner's hard limit (smallest). */
export type BudgetSource = 'plan' | 'operator_override' | 'hard_limit';

export interface EffectiveBudget {
  budgetMicros: number;
  source: BudgetSource;
  planBudgetMicros: number;
  limitOverrideMicros: number | null;
  creditMicros: number;
  hardLimitMicros: number | null;
}

/**
 * The effective budget of a period: the operator override when set, else the plan budget, plus the period's
 * credit; capped by the owner's hard limit when that is smaller. The same rule as admission (limitMicrosOf).
 */
export function effectiveBudget(
  plan: Pick<PlanEntitlements, 'budgetMicros'>,
  limitOverrideMicros: number | null,
  creditMicros: number,
  hardLimitMicros: number | null,
): EffectiveBudget {
  const granted = (limitOverrideMicros ?? plan.budgetMicros) + creditMicros;
  const capped = hardLimitMicros !== null && hardLimitMicros < granted;
  return {
    budgetMicros: capped ? hardLimitMicros : granted,
    source: capped ? 'hard_limit' : limitOverrideMicros !== null ? 'operator_override' : 'plan',
    planBudgetMicros: plan.budgetMicros,
    limitOverrideMicros,
    creditMicros,
    hardLimitMicros,
  };
}

/** Spend and exposure of a period projected linearly to its end. */
export interface Forecast {
  periodStart: string;
  periodEnd: string;
  spentMicros: number;
  budgetMicros: number;
  liveExposureMicros: number;
  projectedMicros: number;
  projectedExhaustionAt: string | null;
  voice: { secondsUsed: number; secondsLimit: number; projectedSeconds: number };
}

/** The pace is measured over at least this much of the period, so the first minutes do not project wildly. */
export const MIN_PACE_WINDOW_MS = 60 * 60 * 1000;

export interface ForecastInput {
  periodStart: Date;
  periodEnd: Date;
  now: Date;
  spentMicros: number;
  liveExposureMicros: number;
  budgetMicros: number;
  voiceSecondsUsed: number;
  voiceSecondsReserved: number;
  voiceSecondsLimit: number;
}

/**
 * Pure: spend so far plus this period's pace (spend over the elapsed time, at least {@link MIN_PACE_WINDOW_MS}) times
 * what is left of the period, plus what live calls and streams hold now. The budget runs out when spend plus exposure
 * plus the pace reaches it: now if it already has, null if not before the period ends (or nothing is being spent).
 */
export function forecastOf(input: ForecastInput): Forecast {
  const start = input.periodStart.getTime();
  const end = input.periodEnd.getTime();
  const now = Math.min(Math.max(input.now.getTime(), start), end);
  const elapsed = Math.max(now - start, MIN_PACE_WINDOW_MS);
  const remaining = end - now;
  const pace = input.spentMicros / elapsed;
  const projectedMicros = Math.ceil(input.spentMicros + input.liveExposureMicros + pace * remaining);
  const left = input.budgetMicros - input.spentMicros - input.liveExposureMicros;
  let exhaustion: number | null = null;
  if (left <= 0) exhaustion = now;
  else if (pace > 0 && now + left / pace < end) exhaustion = Math.ceil(now + left / pace);
  const voicePace = input.voiceSecondsUsed / elapsed;
  return {
    periodStart: input.periodStart.toISOString(),
    periodEnd: input.periodEnd.toISOString(),
    spentMicros: input.spentMicros,
    budgetMicros: input.budgetMicros,
    liveExposureMicros: input.liveExposureMicros,
    projectedMicros,
    projectedExhaustionAt: exhaustion === null ? null : new Date(exhaustion).toISOString(),
    voice: {
      secondsUsed: input.voiceSecondsUsed,
      secondsLimit: input.voiceSecondsLimit,
      projectedSeconds: Math.ceil(input.voiceSecondsUsed + input.voiceSecondsReserved + voicePace * remaining),
    },
  };
}

/** Pure: which thresholds spend has now crossed that were not recorded, and which recorded ones it no longer has. */
export function thresholdChanges(
  thresholds: readonly number[],
  fired: readonly number[],
  spentMicros: number,
  budgetMicros: number,
): { fire: number[]; rearm: number[] } {
  // Integer arithmetic: spent * 100 >= budget * percent, so a threshold is crossed to the micro. Nothing spent
  // crosses nothing (a zero budget with zero spend is not an alert).
  const crossed = (p: number) => spentMicros > 0 && spentMicros * 100 >= budgetMicros * p;
  return {
    fire: [...new Set(thresholds)].filter((p) => crossed(p) && !fired.includes(p)).sort((a, b) => a - b),
    rearm: fired.filter((p) => !crossed(p)),
  };
}

/** The `budget.threshold_crossed` event: what the webhook carries, the banner shows and the audit log records. */
export interface ThresholdAlert {
  accountId: string;
  thresholdPercent: number;
  spentMicros: number;
  budgetMicros: number;
  periodStart: string;
  periodEnd: string;
  projectedMicros: number;
}

/**
 * Called once per crossing, inside the transaction that recorded it (so an outbox row written with `tx` commits or
 * rolls back with the crossing). It must not do network I/O; a throw rolls the spend back with it.
 */
export type ThresholdSink = (alert: ThresholdAlert, tx: TransactionSql) => void | Promise<void>;

export interface BudgetAlertDeps {
  defaultLimitMicros: number;
  now: Date;
  sink: ThresholdSink | undefined;
}

/**
 * Inside the transaction that changed a period's spend or budget: records every threshold now crossed that was not
 * (one row each; a concurrent writer that recorded it first wins and this one does nothing), writes the audit entry,
 * hands the event to the sink, and re-arms thresholds the spend is now below (the budget was raised).
 */
export async function applyBudgetAlerts(
  tx: TransactionSql,
  deps: BudgetAlertDeps,
  accountId: string,
  periodStart: Date,
  state?: bq.AlertStateRow,
): Promise<ThresholdAlert[]> {
  const s = state ?? (await bq.readAlertState(tx, accountId, periodStart));
  if (!s) return [];
  const planCode = isPlanCode(s.planCode) ? s.planCode : 'free';
  const plan = s.plan ?? effectiveEntitlements(planCode, undefined, deps.defaultLimitMicros);
  const budget = effectiveBudget(plan, s.limitOverrideMicros, s.creditMicros, s.budgetHardLimitMicros).budgetMicros;
  const { fire, rearm } = thresholdChanges(s.budgetAlertThresholds, s.fired, s.consumedMicros, budget);
  await bq.deleteBudgetAlerts(tx, accountId, periodStart, rearm);
  if (fire.length === 0) return [];
  const projected = forecastOf({
    periodStart,
    periodEnd: s.periodEnd,
    now: deps.now,
    spentMicros: s.consumedMicros,
    liveExposureMicros: s.reservedMicros,
    budgetMicros: budget,
    voiceSecondsUsed: 0,
    voiceSecondsReserved: 0,
    voiceSecondsLimit: 0,
  }).projectedMicros;
  const alerts: ThresholdAlert[] = [];
  for (const thresholdPercent of fire) {
    const row = await bq.insertBudgetAlert(
      tx,
      accountId,
      {
        thresholdPercent,
        periodStart,
        periodEnd: s.periodEnd,
        spentMicros: s.consumedMicros,
        budgetMicros: budget,
        projectedMicros: projected,
      },
      deps.now,
    );
    if (!row) continue;
    const alert: ThresholdAlert = {
      accountId,
      thresholdPercent,
      spentMicros: s.consumedMicros,
      budgetMicros: budget,
      periodStart: periodStart.toISOString(),
      periodEnd: s.periodEnd.toISOString(),
      projectedMicros: projected,
    };
    await writeAuditLog(tx, {
      actorUserId: null,
      action: 'budget.threshold_crossed',
      targetType: 'budget',
      targetId: accountId,
      after: alert,
    });
    await deps.sink?.(alert, tx);
    alerts.push(alert);
  }
  return alerts;
}

/** Reads a period's alert state without deciding (pipelined by the meter after its balance write). */
export function readAlertState(sql: Queryable, accountId: string, periodStart: Date) {
  return bq.readAlertState(sql, accountId, periodStart);
}
