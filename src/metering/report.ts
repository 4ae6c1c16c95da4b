import { emptyBalance, readAccountPeriod, type LockedAccount } from './account-period.js';
import { nextPeriod } from './periods.js';
import { effectiveEntitlements, isPlanCode, limitMicrosOf } from './plans.js';
import * as rq from './report-queries.js';
import type { Meter } from './service.js';

/** GET /api/v1/account/usage/summary (a dashboard-only route: README.md, API). */
export interface UsageSummary {
  accountId: string;
  planCode: string;
  status: string;
  periodStart: string;
  periodEnd: string;
  limitMicros: number;
  consumedMicros: number;
  reservedMicros: number;
  remainingMicros: number;
  requestCount: number;
  monthlyRequestCap: number | null;
  enforcement: string;
  voice: {
    voiceSecondsUsed: number;
    voiceSecondsLimit: number;
    voiceSecondsReserved: number;
    playgroundVoiceSeconds: number;
  };
}

/**
 * The account, its current period's balance and its plan: one query while the stored period is current (every
 * dashboard read but the first after a period rolls over without a metered write, which takes the general path).
 */
export async function snapshot(meter: Meter, accountId: string): Promise<LockedAccount> {
  const fast = await rq.readAccountSnapshot(meter.sql, accountId);
  if (
    fast &&
    nextPeriod(
      { start: fast.account.periodStart, end: fast.account.periodEnd },
      fast.account.periodAnchor,
      meter.clock.now(),
    ) === undefined
  ) {
    const { account, plan } = fast;
    const planCode = isPlanCode(account.planCode) ? account.planCode : 'free';
    return {
      account,
      period: { start: account.periodStart, end: account.periodEnd },
      balance: fast.balance ?? emptyBalance(accountId, account.periodStart, account.periodEnd),
      plan: effectiveEntitlements(planCode, plan, meter.config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS),
    };
  }
  const read = await readAccountPeriod(
    meter.sql,
    accountId,
    meter.clock,
    meter.config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS,
  );
  if (!read) throw new Error(`no hosting account for ${accountId}`);
  return read;
}

export async function usageSummary(meter: Meter, accountId: string): Promise<UsageSummary> {
  const { account, period, balance, plan } = await snapshot(meter, accountId);
  const limitMicros = limitMicrosOf(
    plan,
    account.limitOverrideMicros,
    balance.creditMicros,
    account.budgetHardLimitMicros,
  );
  return {
    accountId,
    planCode: account.planCode,
    status: account.status,
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
    limitMicros,
    consumedMicros: balance.consumedMicros,
    reservedMicros: balance.reservedMicros,
    remainingMicros: Math.max(0, limitMicros - balance.consumedMicros - balance.reservedMicros),
    requestCount: balance.requestCount,
    monthlyRequestCap: plan.monthlyRequestCap,
    enforcement: meter.mode,
    voice: {
      voiceSecondsUsed: balance.voiceSecondsUsed,
      voiceSecondsLimit: plan.voiceMinutes * 60,
      voiceSecondsReserved: balance.voiceSecondsReserved,
      playgroundVoiceSeconds: balance.playgroundVoiceSeconds,
    },
  };
}

export async function usageLimits(meter: Meter, accountId: string) {
  const { account, period, balance, plan } = await snapshot(meter, accountId);
  return {
    planCode: account.planCode,
    enforcement: meter.mode,
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
    budgetMicros: plan.budgetMicros,
    limitOverrideMicros: account.limitOverrideMicros,
    creditMicros: balance.creditMicros,
    limitMicros: limitMicrosOf(plan, account.limitOverrideMicros, balance.creditMicros, account.budgetHardLimitMicros),
    maxAssistants: plan.maxAssistants,
    monthlyRequestCap: plan.monthlyRequestCap,
    evalsEnabled: plan.evalsEnabled,
    voiceMinutes: plan.voiceMinutes,
    voiceConcurrentCalls: plan.voiceConcurrentCalls,
    maxOutputTokens: meter.maxOutputTokens,
    playgroundExempt: meter.config.HOSTED_USAGE_EXEMPT_PLAYGROUND,
    playgroundVoiceExempt: meter.config.VOICE_QUOTA_EXEMPT_PLAYGROUND,
  };
}

export async function usageByAssistant(meter: Meter, accountId: string) {
  const { period } = await snapshot(meter, accountId);
  const rows = await rq.usageByAssistant(meter.sql, accountId, period.start);
  return {
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
    assistants: rows.map(({ events: _events, ...row }) => row),
  };
}

export async function recentUsage(meter: Meter, accountId: string, limit: number) {
  const rows = await rq.recentUsageEvents(meter.sql, accountId, limit);
  return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
}
