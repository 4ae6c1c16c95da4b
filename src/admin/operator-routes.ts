import { z } from 'zod';
import { emailSchema, principalOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute, type RequestContext } from '../http/index.js';
import type { AdminDeps } from './accounts.js';
import { grantOperator, listOperators, revokeOperator, type OperatorActor } from './operators.js';

const tags = ['Admin'];
const errors = { 401: 'No session', 403: 'Not an operator, or the request failed the Origin check' };
const userId = z.string().regex(/^usr_[0-9A-Za-z]{1,64}$/, 'a user id (usr_...)');

const operatorSchema = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  grantedAt: z.string().nullable().describe('when the database grant was made; null if only ADMIN_USER_IDS lists them'),
  fromConfig: z.boolean().describe('listed in ADMIN_USER_IDS'),
  isAdmin: z.boolean(),
});

const grantBody = z
  .object({ email: emailSchema.optional(), userId: userId.optional() })
  .strict()
  .refine((b) => (b.email === undefined) !== (b.userId === undefined), {
    message: 'give either email or userId',
    path: ['email'],
  });

function actorOf(ctx: RequestContext<unknown, unknown, unknown>): OperatorActor {
  const p = principalOf(ctx);
  if (p.kind !== 'session') throw new Error('admin route without a session principal');
  return { actorUserId: p.userId, requestId: ctx.requestId };
}

/**
 * Operators granted and revoked at run time (admin session; hidden from the v1 document). The change is read with
 * the user's session on their next request: no restart. Each change writes one audit row.
 */
export function operatorRoutes(deps: AdminDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/admin/operators',
      auth: 'admin',
      schemas: { response: { 200: z.object({ operators: z.array(operatorSchema) }) } },
      openapi: {
        summary: 'Operators: granted in the database or listed in ADMIN_USER_IDS',
        tags,
        hidden: true,
        errors,
      },
      handler: async () => reply.json({ operators: await listOperators(deps.sql, deps.adminUserIds) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/admin/operators',
      auth: 'admin',
      schemas: { body: grantBody, response: { 200: z.object({ operator: operatorSchema }) } },
      openapi: {
        summary: 'Make a user an operator (by email or user id), effective on their next request',
        tags,
        hidden: true,
        errors: { 400: 'Invalid body', ...errors, 404: 'No such user' },
      },
      handler: async (ctx) => {
        const who = ctx.body.userId !== undefined ? { userId: ctx.body.userId } : { email: ctx.body.email! };
        return reply.json({ operator: await grantOperator(deps.sql, deps.adminUserIds, who, actorOf(ctx)) });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/admin/operators/:userId',
      auth: 'admin',
      schemas: { params: z.object({ userId }), response: { 200: z.object({ operator: operatorSchema }) } },
      openapi: {
        summary: "Revoke a user's operator grant, effective on their next request",
        tags,
        hidden: true,
        errors: { ...errors, 404: 'No such user', 409: 'Listed in ADMIN_USER_IDS' },
      },
      handler: async (ctx) =>
        reply.json({
          operator: await revokeOperator(deps.sql, deps.adminUserIds, { userId: ctx.params.userId }, actorOf(ctx)),
        }),
    }),
  ];
}
