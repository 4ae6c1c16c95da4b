import { z } from 'zod';
import { readAuditLog } from '../audit/index.js';
import { principalOf } from '../auth/index.js';
import { defineRoute, int32, PG_INT_MAX, reply, type AnyRoute, type RequestContext } from '../http/index.js';
import { PLAN_CODES } from '../metering/index.js';
import * as accounts from './accounts.js';
import type { AdminDeps, Operator } from './accounts.js';
import { operatorRoutes } from './operator-routes.js';

const tags = ['Admin'];
/** Account status values (docs/design-decisions.md, Usage and plans). */
const ACCOUNT_STATUSES = ['active', 'suspended', 'disabled'] as const;
const errors = { 401: 'No session', 403: 'Not an operator, or the request failed the Origin check' };
const micros = z.number().int().min(0).max(1e15);
const accountIdParam = z.object({ id: z.string().regex(/^acct_[0-9A-Za-z]{1,64}$/, 'an account id (acct_...)') });

export const adminAccountSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  ownerEmail: z.string(),
  accountStatus: z.string(),
  status: z.enum(ACCOUNT_STATUSES),
  planCode: z.enum(PLAN_CODES),
  periodStart: z.string(),
  periodEnd: z.string(),
  limitOverrideMicros: z.number().int().nullable(),
  limitMicros: z.number().int(),
  consumedMicros: z.number().int(),
  reservedMicros: z.number().int(),
  creditMicros: z.number().int(),
  requestCount: z.number().int(),
  billingSubscriptionId: z.string().nullable(),
  billingSubscriptionStatus: z.string().nullable(),
  createdAt: z.string(),
});

const planSchema = z.object({
  planCode: z.enum(PLAN_CODES),
  budgetMicros: z.number().int(),
  maxAssistants: z.number().int().nullable(),
  monthlyRequestCap: z.number().int().nullable(),
  evalsEnabled: z.boolean(),
  voiceMinutes: z.number().int(),
  voiceConcurrentCalls: z.number().int(),
});

const accountPatchSchema = z
  .object({
    status: z.enum(ACCOUNT_STATUSES).optional(),
    limitOverrideMicros: micros.nullable().optional().describe('null clears the override'),
    planCode: z.enum(PLAN_CODES).optional(),
  })
  .strict()
  .refine((b) => b.status !== undefined || b.limitOverrideMicros !== undefined || b.planCode !== undefined, {
    message: 'set at least one of status, limitOverrideMicros, planCode',
  });

const planPatchSchema = z
  .object({
    budgetMicros: micros.optional(),
    maxAssistants: int32().min(0).nullable().optional(),
    monthlyRequestCap: int32().min(0).nullable().optional(),
    evalsEnabled: z.boolean().optional(),
    voiceMinutes: int32()
      .min(0)
      .max(Math.floor(PG_INT_MAX / 60))
      .optional()
      .describe('at most 35791394, so the seconds fit an integer column'),
    voiceConcurrentCalls: int32().min(0).optional(),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'set at least one entitlement' });

function operatorOf(ctx: RequestContext<unknown, unknown, unknown>): Operator {
  const p = principalOf(ctx);
  if (p.kind !== 'session') throw new Error('admin route without a session principal');
  return { userId: p.userId, requestId: ctx.requestId };
}

/** Strips keys whose value is undefined (zod optional fields), so a patch only names what it sets. */
function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Operator routes (admin session; hidden from the v1 document). Every change writes one audit row. */
export function adminRoutes(deps: AdminDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/admin/accounts',
      auth: 'admin',
      schemas: {
        query: z.object({
          limit: z.coerce.number().int().min(1).max(200).default(50),
          offset: z.coerce.number().int().min(0).default(0),
        }),
        response: {
          200: z.object({ accounts: z.array(adminAccountSchema), limit: z.number().int(), offset: z.number().int() }),
        },
      },
      openapi: { summary: 'List hosting accounts, highest spend first', tags, hidden: true, errors },
      handler: async (ctx) =>
        reply.json({
          accounts: await accounts.listAccounts(deps, ctx.query),
          limit: ctx.query.limit,
          offset: ctx.query.offset,
        }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/admin/accounts/:id',
      auth: 'admin',
      schemas: {
        params: accountIdParam,
        body: accountPatchSchema,
        response: { 200: z.object({ account: adminAccountSchema }) },
      },
      openapi: {
        summary: 'Change status, limit override or plan of a hosting account',
        tags,
        hidden: true,
        errors: { 400: 'Invalid body', ...errors, 404: 'No such account' },
      },
      handler: async (ctx) =>
        reply.json({ account: await accounts.updateAccount(deps, operatorOf(ctx), ctx.params.id, defined(ctx.body)) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/admin/accounts/:id/credit',
      auth: 'admin',
      schemas: {
        params: accountIdParam,
        body: z.object({ creditMicros: micros.min(1) }).strict(),
        response: { 200: z.object({ account: adminAccountSchema }) },
      },
      openapi: {
        summary: 'Grant credit for the current billing period',
        tags,
        hidden: true,
        errors: { 400: 'Invalid body', ...errors, 404: 'No such account' },
      },
      handler: async (ctx) =>
        reply.json({
          account: await accounts.grantCredit(deps, operatorOf(ctx), ctx.params.id, ctx.body.creditMicros),
        }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/admin/plans',
      auth: 'admin',
      schemas: { response: { 200: z.object({ plans: z.array(planSchema) }) } },
      openapi: { summary: 'Plan entitlements', tags, hidden: true, errors },
      handler: async () => reply.json({ plans: await accounts.listPlans(deps) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/admin/plans/:planCode',
      auth: 'admin',
      schemas: {
        params: z.object({ planCode: z.enum(PLAN_CODES) }),
        body: planPatchSchema,
        response: { 200: z.object({ plan: planSchema }) },
      },
      openapi: {
        summary: "Edit a plan's entitlements",
        tags,
        hidden: true,
        errors: { 400: 'Invalid body', ...errors, 404: 'No such plan' },
      },
      handler: async (ctx) =>
        reply.json({ plan: await accounts.updatePlan(deps, operatorOf(ctx), ctx.params.planCode, defined(ctx.body)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/admin/audit',
      auth: 'admin',
      schemas: {
        query: z.object({
          targetType: z.string().max(50).optional(),
          targetId: z.string().max(100).optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
          offset: z.coerce.number().int().min(0).max(PG_INT_MAX).default(0),
        }),
        response: {
          200: z.object({ entries: z.array(auditEntrySchema), limit: z.number().int(), offset: z.number().int() }),
        },
      },
      openapi: { summary: 'The audit log, newest first (optionally of one target)', tags, hidden: true, errors },
      handler: async (ctx) => {
        const rows = await readAuditLog(deps.sql, defined(ctx.query));
        return reply.json({
          entries: rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })),
          limit: ctx.query.limit,
          offset: ctx.query.offset,
        });
      },
    }),
    ...operatorRoutes(deps),
  ];
}

const auditEntrySchema = z.object({
  id: z.string(),
  actorUserId: z.string().nullable(),
  action: z.string(),
  targetType: z.string(),
  targetId: z.string(),
  before: z.unknown(),
  after: z.unknown(),
  requestId: z.string().nullable(),
  createdAt: z.string(),
});
