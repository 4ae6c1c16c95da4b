import { markAccountKeysStale, type AccountStatus } from '../auth/index.js';
import type { Sql } from '../db/index.js';
import {
  addPeriodCredit,
  limitMicrosOf,
  listPlanEntitlements,
  updatePlanEntitlements,
  type Meter,
  type PlanCode,
  type PlanEntitlements,
  type PlanPatch,
} from '../metering/index.js';
import type { SharedStore } from '../store/types.js';
import * as aq from './account-queries.js';
import { writeAuditLog } from '../audit/index.js';
import { adminErrors } from './errors.js';

export interface AdminDeps {
  sql: Sql;
  store: SharedStore;
  meter: Meter;
  /** ADMIN_USER_IDS: operators by configuration, beside those granted in the database. */
  adminUserIds: readonly string[];
}

/** Who is acting, for the audit row. */
export interface Operator {
  userId: string;
  requestId: string;
}

/** The stored row with its dates as ISO strings, plus the limit in force (plan budget, override and credit). */
export interface AdminAccountView extends Omit<aq.AdminAccountRow, 'periodStart' | 'periodEnd' | 'createdAt'> {
  periodStart: string;
  periodEnd: string;
  limitMicros: number;
  createdAt: string;
}

export interface AccountPatch {
  status?: AccountStatus | undefined;
  limitOverrideMicros?: number | null | undefined;
  planCode?: PlanCode | undefined;
}

export async function listAccounts(
  deps: AdminDeps,
  page: { limit: number; offset: number },
): Promise<AdminAccountView[]> {
  const [rows, plans] = await Promise.all([aq.listAccounts(deps.sql, page.limit, page.offset), plansByCode(deps)]);
  return rows.map((r) => present(r, plans, deps.meter));
}

export async function getAccount(deps: AdminDeps, accountId: string): Promise<AdminAccountView> {
  const row = await aq.findAccount(deps.sql, accountId);
  if (!row) throw adminErrors.accountNotFound();
  return present(row, await plansByCode(deps), deps.meter);
}

/**
 * PATCH: applies status, limit override and plan code (only the fields given), audit-logged with the old and
 * new values of what changed, in one transaction. A status change makes every instance re-check the account's
 * API keys on their next use.
 */
export async function updateAccount(
  deps: AdminDeps,
  operator: Operator,
  accountId: string,
  patch: AccountPatch,
): Promise<AdminAccountView> {
  const changed = await deps.sql.begin(async (tx) => {
    const current = await aq.lockHostingSettings(tx, accountId);
    if (!current) throw adminErrors.accountNotFound();
    const next: aq.HostingSettings = {
      status: patch.status ?? current.status,
      planCode: patch.planCode ?? current.planCode,
      limitOverrideMicros:
        patch.limitOverrideMicros !== undefined ? patch.limitOverrideMicros : current.limitOverrideMicros,
    };
    const keys = (['status', 'planCode', 'limitOverrideMicros'] as const).filter((k) => next[k] !== current[k]);
    if (keys.length === 0) return { statusChanged: false };
    await aq.updateHostingSettings(tx, accountId, next);
    await writeAuditLog(tx, {
      actorUserId: operator.userId,
      requestId: operator.requestId,
      action: 'hosting_account.updated',
      targetType: 'account',
      targetId: accountId,
      before: Object.fromEntries(keys.map((k) => [k, current[k]])),
      after: Object.fromEntries(keys.map((k) => [k, next[k]])),
    });
    return { statusChanged: keys.includes('status') };
  });
  if (changed.statusChanged) await markAccountKeysStale(deps.sql, deps.store, accountId);
  return getAccount(deps, accountId);
}

/** Grants credit for the current period (docs/design-decisions.md, Admin and billing), audit-logged with the period's credit before and after. */
export async function grantCredit(
  deps: AdminDeps,
  operator: Operator,
  accountId: string,
  creditMicros: number,
): Promise<AdminAccountView> {
  await deps.sql.begin(async (tx) => {
    if (!(await aq.lockHostingSettings(tx, accountId))) throw adminErrors.accountNotFound();
    const credit = await addPeriodCredit(deps.meter, tx, accountId, creditMicros);
    await writeAuditLog(tx, {
      actorUserId: operator.userId,
      requestId: operator.requestId,
      action: 'hosting_account.credit_granted',
      targetType: 'account',
      targetId: accountId,
      before: { creditMicros: credit.before, periodStart: credit.periodStart.toISOString() },
      after: { creditMicros: credit.after, grantedMicros: creditMicros, periodStart: credit.periodStart.toISOString() },
    });
  });
  return getAccount(deps, accountId);
}

export async function listPlans(deps: AdminDeps): Promise<PlanEntitlements[]> {
  return [...(await plansByCode(deps)).values()];
}

/** Edits one plan's entitlements; audit-logged with the changed fields before and after. */
export async function updatePlan(
  deps: AdminDeps,
  operator: Operator,
  planCode: PlanCode,
  patch: PlanPatch,
): Promise<PlanEntitlements> {
  return deps.sql.begin(async (tx) => {
    const result = await updatePlanEntitlements(tx, planCode, patch);
    if (!result) throw adminErrors.planNotFound();
    const keys = (Object.keys(patch) as Array<keyof PlanPatch>).filter((k) => result.before[k] !== result.after[k]);
    if (keys.length > 0) {
      await writeAuditLog(tx, {
        actorUserId: operator.userId,
        requestId: operator.requestId,
        action: 'plan_entitlements.updated',
        targetType: 'plan',
        targetId: planCode,
        before: Object.fromEntries(keys.map((k) => [k, result.before[k]])),
        after: Object.fromEntries(keys.map((k) => [k, result.after[k]])),
      });
    }
    return result.after;
  });
}

async function plansByCode(deps: AdminDeps): Promise<Map<string, PlanEntitlements>> {
  return new Map((await listPlanEntitlements(deps.meter)).map((p) => [p.planCode, p]));
}

function present(row: aq.AdminAccountRow, plans: Map<string, PlanEntitlements>, meter: Meter): AdminAccountView {
  const plan = plans.get(row.planCode);
  const budget = plan?.budgetMicros ?? meter.config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS;
  return {
    id: row.id,
    name: row.name,
    ownerEmail: row.ownerEmail,
    accountStatus: row.accountStatus,
    status: row.status,
    planCode: row.planCode,
    periodStart: row.periodStart.toISOString(),
    periodEnd: row.periodEnd.toISOString(),
    limitOverrideMicros: row.limitOverrideMicros,
    limitMicros: limitMicrosOf({ budgetMicros: budget } as PlanEntitlements, row.limitOverrideMicros, row.creditMicros),
    consumedMicros: row.consumedMicros,
    reservedMicros: row.reservedMicros,
    creditMicros: row.creditMicros,
    requestCount: row.requestCount,
    billingSubscriptionId: row.billingSubscriptionId,
    billingSubscriptionStatus: row.billingSubscriptionStatus,
    createdAt: row.createdAt.toISOString(),
  };
}
