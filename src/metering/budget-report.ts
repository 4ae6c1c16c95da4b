import { writeAuditLog } from '../audit/index.js';
import { AppError, HttpErrorCodes } from '../errors/index.js';
import * as bq from './budget-queries.js';
import { effectiveBudget, forecastOf, type BudgetSettings, type EffectiveBudget, type Forecast } from './budget.js';
import { snapshot } from './report.js';
import type { Meter } from './service.js';

/** GET /api/v1/account/budget: the settings, the effective budget and where it comes from, this period's alerts. */
export interface BudgetView {
  alertThresholdsPercent: number[];
  hardLimitMicros: number | null;
  effective: EffectiveBudget;
  periodStart: string;
  periodEnd: string;
  spentMicros: number;
  /** Thresholds crossed this period, lowest first: the dashboard's banner until the period ends. */
  alerts: Array<{
    thresholdPercent: number;
    spentMicros: number;
    budgetMicros: number;
    projectedMicros: number;
    crossedAt: string;
  }>;
}

export const BudgetErrorCodes = {
  /** 400: hardLimitMicros is above the budget the plan (or the operator) grants this period. */
  HARD_LIMIT_ABOVE_BUDGET: 'BUDGET_HARD_LIMIT_ABOVE_BUDGET',
} as const;

export async function budgetView(meter: Meter, accountId: string): Promise<BudgetView> {
  const { account, period, balance, plan } = await snapshot(meter, accountId);
  const alerts = await bq.listBudgetAlerts(meter.sql, accountId, period.start);
  return {
    alertThresholdsPercent: account.budgetAlertThresholds,
    hardLimitMicros: account.budgetHardLimitMicros,
    effective: effectiveBudget(plan, account.limitOverrideMicros, balance.creditMicros, account.budgetHardLimitMicros),
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
    spentMicros: balance.consumedMicros,
    alerts: alerts.map((a) => ({
      thresholdPercent: a.thresholdPercent,
      spentMicros: a.spentMicros,
      budgetMicros: a.budgetMicros,
      projectedMicros: a.projectedMicros,
      crossedAt: a.createdAt.toISOString(),
    })),
  };
}

/**
 * PUT /api/v1/account/budget. Fields left out keep their value. In one transaction with the account and its period
 * locked (as admission locks them): the settings, their audit entry, and the alerts they change: thresholds now
 * crossed fire (a lowered limit), thresholds spend is now below re-arm (a raised one).
 */
export async function updateBudget(
  meter: Meter,
  accountId: string,
  userId: string,
  patch: Partial<BudgetSettings>,
  requestId?: string,
): Promise<BudgetView> {
  await meter.sql.begin(async (tx) => {
    const { account, period, balance, plan } = await meter.lock(tx, accountId);
    const before: BudgetSettings = {
      alertThresholdsPercent: account.budgetAlertThresholds,
      hardLimitMicros: account.budgetHardLimitMicros,
    };
    const after: BudgetSettings = {
      alertThresholdsPercent: [...new Set(patch.alertThresholdsPercent ?? before.alertThresholdsPercent)].sort(
        (a, b) => a - b,
      ),
      hardLimitMicros: patch.hardLimitMicros === undefined ? before.hardLimitMicros : patch.hardLimitMicros,
    };
    const granted = effectiveBudget(plan, account.limitOverrideMicros, balance.creditMicros, null).budgetMicros;
    if (after.hardLimitMicros !== null && after.hardLimitMicros > granted) {
      throw new AppError(
        BudgetErrorCodes.HARD_LIMIT_ABOVE_BUDGET,
        400,
        'hardLimitMicros must be at or below the budget of the plan (or its override) for this period.',
        { details: { field: 'hardLimitMicros', maxMicros: granted } },
      );
    }
    await bq.writeBudgetSettings(tx, accountId, after);
    await writeAuditLog(tx, {
      actorUserId: userId,
      action: 'budget.updated',
      targetType: 'budget',
      targetId: accountId,
      before,
      after,
      ...(requestId !== undefined ? { requestId } : {}),
    });
    await meter.budgetAlerts(tx, accountId, period.start);
  });
  return budgetView(meter, accountId);
}

export async function usageForecast(meter: Meter, accountId: string): Promise<Forecast> {
  const { account, period, balance, plan } = await snapshot(meter, accountId);
  return forecastOf({
    periodStart: period.start,
    periodEnd: period.end,
    now: meter.clock.now(),
    spentMicros: balance.consumedMicros,
    liveExposureMicros: balance.reservedMicros,
    budgetMicros: effectiveBudget(
      plan,
      account.limitOverrideMicros,
      balance.creditMicros,
      account.budgetHardLimitMicros,
    ).budgetMicros,
    voiceSecondsUsed: balance.voiceSecondsUsed,
    voiceSecondsReserved: balance.voiceSecondsReserved,
    voiceSecondsLimit: plan.voiceMinutes * 60,
  });
}

/** At most this many days per daily request. */
export const MAX_DAILY_SPAN_DAYS = 366;

const DAY_MS = 86_400_000;

function rangeError(field: 'from' | 'to', message: string): AppError {
  return new AppError(HttpErrorCodes.VALIDATION_FAILED, 400, message, {
    details: { issues: [{ path: `query.${field}`, message }] },
  });
}

interface DayTotals {
  date: string;
  costMicros: number;
  requestCount: number;
  inputTokens: number;
  outputTokens: number;
  voiceSeconds: number;
  byAssistant: Array<{ assistantId: string | null; costMicros: number; requestCount: number }>;
  bySource: Array<{ source: string; costMicros: number; requestCount: number }>;
  byKind: Array<{ kind: string; costMicros: number; units: number }>;
}

/** The entry of `list` that `match` finds, made (and added) when there is none. */
function entryOf<T>(list: T[], match: (e: T) => boolean, make: () => T): T {
  let entry = list.find(match);
  if (entry === undefined) list.push((entry = make()));
  return entry;
}

/**
 * GET /api/v1/account/usage/daily: every UTC day of [from, to] (inclusive, at most 366 days), zero-filled, from the
 * per-day roll-up. Without from/to: the days of the current period, counting only its spend, so they add up to the
 * period's "budget used" to the micro.
 */
export async function dailyUsage(meter: Meter, accountId: string, query: { from?: string; to?: string }) {
  const { period } = await snapshot(meter, accountId);
  const current = query.from === undefined && query.to === undefined;
  const lastInstant = Math.min(meter.clock.now().getTime(), period.end.getTime() - 1);
  const from = query.from ?? period.start.toISOString().slice(0, 10);
  const to = query.to ?? new Date(Math.max(lastInstant, period.start.getTime())).toISOString().slice(0, 10);
  const fromMs = Date.parse(`${from}T00:00:00Z`);
  const toMs = Date.parse(`${to}T00:00:00Z`);
  if (toMs < fromMs) throw rangeError('to', '`to` is before `from`.');
  if ((toMs - fromMs) / DAY_MS + 1 > MAX_DAILY_SPAN_DAYS)
    throw rangeError('to', `At most ${MAX_DAILY_SPAN_DAYS} days per request.`);
  const rows = await bq.readDailyTotals(meter.sql, accountId, from, to, current ? period.start : null);
  const days = new Map<string, DayTotals>();
  for (let d = fromMs; d <= toMs; d += DAY_MS) {
    const date = new Date(d).toISOString().slice(0, 10);
    days.set(date, {
      date,
      costMicros: 0,
      requestCount: 0,
      inputTokens: 0,
      outputTokens: 0,
      voiceSeconds: 0,
      byAssistant: [],
      bySource: [],
      byKind: [],
    });
  }
  let totalMicros = 0;
  for (const r of rows) {
    const day = days.get(r.day);
    if (!day) continue;
    totalMicros += r.costMicros;
    day.costMicros += r.costMicros;
    day.requestCount += r.requestCount;
    day.inputTokens += r.inputTokens;
    day.outputTokens += r.outputTokens;
    if (r.kind === 'voice') day.voiceSeconds += r.units;
    const a = entryOf(
      day.byAssistant,
      (e) => e.assistantId === r.assistantId,
      () => ({ assistantId: r.assistantId, costMicros: 0, requestCount: 0 }),
    );
    a.costMicros += r.costMicros;
    a.requestCount += r.requestCount;
    const s = entryOf(
      day.bySource,
      (e) => e.source === r.source,
      () => ({ source: r.source, costMicros: 0, requestCount: 0 }),
    );
    s.costMicros += r.costMicros;
    s.requestCount += r.requestCount;
    const k = entryOf(
      day.byKind,
      (e) => e.kind === r.kind,
      () => ({ kind: r.kind, costMicros: 0, units: 0 }),
    );
    k.costMicros += r.costMicros;
    k.units += r.units;
  }
  return {
    from,
    to,
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
    currentPeriodOnly: current,
    totalMicros,
    days: [...days.values()],
  };
}
