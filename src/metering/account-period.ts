import { nextPeriod, type Clock, type Period } from './periods.js';
import { effectiveEntitlements, isPlanCode, type PlanEntitlements } from './plans.js';
import * as q from './queries.js';

/** The hosting account as admission sees it: locked, its period current, its balance row locked. */
export interface LockedAccount {
  account: q.HostingAccountRow;
  period: Period;
  balance: q.BalanceRow;
  plan: PlanEntitlements;
}

/**
 * Inside a transaction: locks the hosting account, rolls its billing period forward when the stored one has
 * ended, creates the period's balance row if needed and locks it (SELECT ... FOR UPDATE), then reads the plan.
 * Lock order everywhere: hosting account, then balance, then reservation rows; so no two paths deadlock.
 * Returns undefined when the account has no hosting account.
 */
export async function lockAccountPeriod(
  tx: q.Queryable,
  accountId: string,
  clock: Clock,
  defaultLimitMicros: number,
): Promise<LockedAccount | undefined> {
  const account = await q.lockHostingAccount(tx, accountId);
  if (!account) return undefined;
  const now = clock.now();
  let period: Period = { start: account.periodStart, end: account.periodEnd };
  const next = nextPeriod(period, account.periodAnchor, now);
  if (next) {
    period = next;
    await q.setHostingPeriod(tx, accountId, next.start, next.end);
    account.periodStart = next.start;
    account.periodEnd = next.end;
  }
  const planCode = isPlanCode(account.planCode) ? account.planCode : 'free';
  // Sent together (one round trip: the transaction's connection pipelines them, and runs them in this order). The
  // account's lock is held from here to the commit, and every admission of the account waits for it: under a burst
  // of one account's mints or chats, each round trip saved here is saved once per request in the queue.
  const [, balance, planRow] = await Promise.all([
    q.ensureBalance(tx, accountId, period.start, period.end),
    q.lockBalance(tx, accountId, period.start),
    q.findPlan(tx, planCode),
  ]);
  if (!balance) throw new Error(`usage balance of ${accountId} vanished inside its transaction`);
  const plan = effectiveEntitlements(planCode, planRow, defaultLimitMicros);
  return { account, period, balance, plan };
}

/** The same picture without locks or writes (dashboard reads): a period that ended reads as a fresh one. */
export async function readAccountPeriod(
  sql: q.Queryable,
  accountId: string,
  clock: Clock,
  defaultLimitMicros: number,
): Promise<LockedAccount | undefined> {
  const account = await q.findHostingAccount(sql, accountId);
  if (!account) return undefined;
  const now = clock.now();
  const period = nextPeriod({ start: account.periodStart, end: account.periodEnd }, account.periodAnchor, now) ?? {
    start: account.periodStart,
    end: account.periodEnd,
  };
  const stored = await q.findBalance(sql, accountId, period.start);
  const balance = stored ?? emptyBalance(accountId, period.start, period.end);
  const planCode = isPlanCode(account.planCode) ? account.planCode : 'free';
  const plan = effectiveEntitlements(planCode, await q.findPlan(sql, planCode), defaultLimitMicros);
  return { account: { ...account, periodStart: period.start, periodEnd: period.end }, period, balance, plan };
}

/** The balance of a period nothing has been written to yet. */
export function emptyBalance(accountId: string, periodStart: Date, periodEnd: Date): q.BalanceRow {
  return {
    accountId,
    periodStart,
    periodEnd,
    consumedMicros: 0,
    reservedMicros: 0,
    creditMicros: 0,
    requestCount: 0,
    voiceSecondsUsed: 0,
    voiceSecondsReserved: 0,
    playgroundVoiceSeconds: 0,
    voiceCostMicros: 0,
  };
}
